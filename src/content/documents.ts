/**
 * Static models (docs/content.md): definitions in `/🗄/` and their documents in `/🗄/<Model>/**`,
 * read, checked and turned into records at load.
 *
 * 1. Definitions: `/🗄/🌐Name.yaml`, `/🗄/📄Name.yaml`, `/🗄/📎Name.yaml` or `/🗄/Name.yaml`
 *    (no prefix: a Universal model), parsed as model definitions (src/models) that may use the
 *    document types: `document-markdown` (alias `document-text`, the Markdown body),
 *    `document-uid` (`path: true`: the document's path), `document-date` (the date in its path).
 * 2. Documents: every file under `/🗄/<Model>/`. A `.md` file is YAML front matter between two
 *    `---` lines, then the Markdown body; a `.yaml` file is a map of fields, or the same front
 *    matter and body. Each field is checked as a model field is checked on write; a document that
 *    breaks its definition is a build error at its file and line.
 * 3. Every document becomes a row (id, created, modified, container, the fields in definition
 *    order), the form the model runtime reads. The id is the path uid: the document's path under
 *    `/🗄/<Model>/` without its extension (`controllers/js`). A front-matter `uid:` that differs
 *    from the path uid (when the uid field has `path: true`) is a legacy alias: requests for it
 *    are redirected to the document's current URL.
 */
import { isMap, isScalar, parseDocument, type Node, type Pair } from 'yaml';
import type { DiagnosticList, Position } from '../diag/index.js';
import { checkFieldValue, parseDefinition, type FieldDefinition, type ModelDefinition, type ModelKind, type ModelSchema } from '../models/index.js';
import type { SourceTree } from '../shared/index.js';
import { ROW } from '../script/index.js';

export const STATIC_ROOT = '/🗄';
const PREFIXES: Record<string, ModelKind> = { '🌐': 'universal', '📄': 'content', '📎': 'embedded' };
const PASCAL = /^[A-Z][A-Za-z0-9]{0,19}$/;
const DOCUMENT_EXTENSIONS = ['.md', '.markdown', '.yaml', '.yml'];

/** One document: its file, path uid, row and the positions of its front-matter keys. */
export interface StaticDocument {
  file: string;
  /** The path under /🗄/<Model>/ without extension: the record id. */
  uid: string;
  /** id, created, modified, container (null), then the model's own fields in definition order. */
  row: unknown[];
  /** A front-matter `uid:` that differs from the path uid (legacy alias). */
  alias?: string;
}

export interface StaticContent {
  /** Static model definitions (no containers) and their embedded types. */
  schema: ModelSchema;
  /** Documents by model name, in path order. */
  documents: Map<string, StaticDocument[]>;
}

/** Reads `/🗄/`: `paths` are every app file path (the walk's), `tree` reads them. */
export function readStaticContent(tree: SourceTree, paths: readonly string[], diagnostics: DiagnosticList): StaticContent {
  const schema: ModelSchema = { models: new Map(), embedded: new Map() };
  const documents = new Map<string, StaticDocument[]>();
  const inRoot = paths.filter((p) => p.startsWith(STATIC_ROOT + '/') && !p.split('/').some((s) => s.startsWith('.')));
  if (inRoot.length === 0) return { schema, documents };

  // 1. Definitions.
  const headers: Array<{ name: string; kind: ModelKind; file: string }> = [];
  for (const file of inRoot.filter((p) => p.lastIndexOf('/') === STATIC_ROOT.length).sort()) {
    const name = file.slice(STATIC_ROOT.length + 1);
    if (!/\.ya?ml$/.test(name)) {
      diagnostics.error('LW_CONTENT_DEFINITION', `${name} is not a static model definition: name it 📄Name.yaml (or 🌐Name.yaml), and put documents in ${STATIC_ROOT}/Name/`, file);
      continue;
    }
    const prefix = Object.keys(PREFIXES).find((p) => name.startsWith(p));
    const bare = name.slice(prefix?.length ?? 0).replace(/\.ya?ml$/, '');
    if (!PASCAL.test(bare)) {
      diagnostics.error('LW_MODEL_NAME', `"${bare}" is not a model name: use PascalCase letters and digits, at most 20 characters`, file);
      continue;
    }
    if (headers.some((h) => h.name === bare)) {
      diagnostics.error('LW_MODEL_DUPLICATE', `${bare} is already defined by ${headers.find((h) => h.name === bare)!.file}: rename one of them`, file);
      continue;
    }
    headers.push({ name: bare, kind: prefix ? PREFIXES[prefix]! : 'universal', file });
  }
  const known = new Map(headers.map((h) => [h.name, h.kind]));
  const ctx = { diagnostics, known, inline: new Map<string, ModelDefinition>(), static: true };
  for (const h of headers) {
    const model = parseDefinition(h, tree.read(h.file) ?? '', ctx);
    if (!model) continue;
    if (model.kind === 'embedded') schema.embedded.set(model.name, model);
    else {
      checkDocumentFields(model, diagnostics);
      schema.models.set(model.name, model);
    }
  }
  for (const [name, model] of ctx.inline) schema.embedded.set(name, model);

  // 2. Documents.
  for (const file of inRoot.filter((p) => p.lastIndexOf('/') > STATIC_ROOT.length).sort(comparePaths)) {
    const rest = file.slice(STATIC_ROOT.length + 1);
    const modelName = rest.slice(0, rest.indexOf('/'));
    const model = schema.models.get(modelName);
    if (!model) {
      if (!known.has(modelName)) {
        diagnostics.error('LW_CONTENT_DOCUMENT', `${STATIC_ROOT}/${modelName}/ holds documents of a model that is not defined: add ${STATIC_ROOT}/📄${modelName}.yaml`, file);
      }
      continue;
    }
    const inModel = rest.slice(modelName.length + 1);
    const ext = DOCUMENT_EXTENSIONS.find((e) => inModel.toLowerCase().endsWith(e));
    if (!ext) {
      diagnostics.warn('LW_CONTENT_DOCUMENT', `${inModel} is not a document (.md or .yaml) and is ignored; keep images and other files outside ${STATIC_ROOT}/`, file);
      continue;
    }
    const doc = readDocument(model, file, inModel.slice(0, -ext.length), ext, tree.read(file) ?? '', schema, diagnostics);
    if (!doc) continue;
    let list = documents.get(model.name);
    if (!list) documents.set(model.name, (list = []));
    list.push(doc);
  }
  for (const model of schema.models.values()) if (!documents.has(model.name)) documents.set(model.name, []);
  checkAliases(documents, diagnostics);
  return { schema, documents };
}

/** Paths in a stable order that puts `a/b` right after `a` and digits in numeric order (`2/` before `10/`). */
let collator: Intl.Collator | undefined;
function comparePaths(a: string, b: string): number {
  // Made on first use: making it costs milliseconds at start, and apps without static models never sort.
  return (collator ??= new Intl.Collator('en', { numeric: true })).compare(a, b);
}

/** At most one body field, one uid field and one date field per model. */
function checkDocumentFields(model: ModelDefinition, diagnostics: DiagnosticList): void {
  for (const kind of ['markdown', 'uid', 'date'] as const) {
    const fields = model.fields.filter((f) => f.document === kind);
    if (fields.length > 1) {
      const f = fields[1]!;
      diagnostics.at('error', 'LW_CONTENT_DEFINITION', `${model.name} has two document-${kind} fields (${fields.map((x) => x.name).join(', ')}): keep one`, f.at.file, f.at);
    }
  }
}

interface FrontMatter {
  /** The YAML map (null when the file has none). */
  map: Node | null;
  /** Line of the YAML's first line in the file (1-based). */
  firstLine: number;
  yamlText: string;
  body: string | undefined;
  /** Line of the body's first line in the file. */
  bodyLine: number;
}

/** Splits a document file into its YAML part and its Markdown body. */
function splitDocument(text: string, ext: string): FrontMatter {
  const src = text.replace(/^\uFEFF/, '');
  const fm = /^---[ \t]*\r?\n/.exec(src);
  if (fm) {
    const close = /^---[ \t]*$/m;
    const afterOpen = src.slice(fm[0].length);
    const m = close.exec(afterOpen);
    if (m) {
      const yamlText = afterOpen.slice(0, m.index);
      let body = afterOpen.slice(m.index + m[0].length);
      body = body.replace(/^\r?\n/, '');
      const bodyLine = 2 + countLines(yamlText) + 1;
      return { map: null, firstLine: 2, yamlText, body, bodyLine };
    }
  }
  if (ext === '.md' || ext === '.markdown') return { map: null, firstLine: 1, yamlText: '', body: src, bodyLine: 1 };
  return { map: null, firstLine: 1, yamlText: src, body: undefined, bodyLine: 1 };
}

function countLines(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

/** `2000-01-03`, `2000-01/02`, `2000/01-01` → 2000-01-03; else undefined. */
export function dateFromPath(uid: string): string | undefined {
  const m = /^(\d{4})[-/](\d{2})[-/](\d{2})$/.exec(uid);
  if (!m) return undefined;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (d.getUTCFullYear() !== Number(m[1]) || d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) return undefined;
  return `${m[1]}-${m[2]}-${m[3]}`;
}

function readDocument(
  model: ModelDefinition,
  file: string,
  uid: string,
  ext: string,
  text: string,
  schema: ModelSchema,
  diagnostics: DiagnosticList,
): StaticDocument | undefined {
  const parts = splitDocument(text, ext);
  const pos = (node: Node | null | undefined): Position => {
    const range = node?.range;
    if (!range) return { line: parts.firstLine, column: 1 };
    const before = parts.yamlText.slice(0, range[0]);
    const line = countLines(before);
    const col = range[0] - (before.lastIndexOf('\n') + 1) + 1;
    return { line: parts.firstLine + line, column: col };
  };
  const values = new Map<string, { value: unknown; key: Node | null; node: Node | null }>();
  if (parts.yamlText.trim() !== '') {
    const doc = parseDocument(parts.yamlText);
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        const before = parts.yamlText.slice(0, err.pos[0]);
        diagnostics.at('error', 'LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, file, { line: parts.firstLine + countLines(before), column: err.pos[0] - (before.lastIndexOf('\n') + 1) + 1 });
      }
      return undefined;
    }
    if (!isMap(doc.contents)) {
      diagnostics.at('error', 'LW_CONTENT_DOCUMENT', `a document is a map of fields (\`title: …\`), one per line`, file, pos(doc.contents));
      return undefined;
    }
    for (const pair of doc.contents.items as Array<Pair<Node | null, Node | null>>) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      const node = pair.value;
      values.set(key, { value: node === null ? null : (node as { toJSON(): unknown }).toJSON(), key: pair.key, node });
    }
  }

  const fields = model.fields.filter((f) => !f.builtIn);
  const known = new Set(fields.map((f) => f.name));
  // A Markdown file with no front matter at all, in a model that needs fields: a draft, not a document.
  if (parts.body !== undefined && parts.yamlText === '' && parts.firstLine === 1) {
    const needed = fields.filter((f) => !f.optional && f.document === undefined && (f.init === undefined || f.init === false) && f.list === undefined);
    if (needed.length > 0) {
      diagnostics.warn('LW_CONTENT_DOCUMENT', `${file.slice(file.lastIndexOf('/') + 1)} has no front matter, so it is not a ${model.name} document (it needs ${needed.map((f) => f.name).join(', ')}): start it with ---, the fields, and --- to publish it`, file);
      return undefined;
    }
  }
  let ok = true;
  let alias: string | undefined;
  for (const [key, v] of values) {
    if (known.has(key)) continue;
    if (key === 'uid' && fields.some((f) => f.document === 'uid' && f.path)) continue; // legacy alias, below
    const near = fields.map((f) => f.name).find((n) => n.toLowerCase() === key.toLowerCase());
    diagnostics.at('error', 'LW_CONTENT_DOCUMENT', `${model.name} has no field "${key}"${near ? `: did you mean ${near}?` : `; its fields are ${fields.map((f) => f.name).join(', ')}`}`, file, pos(v.key));
    ok = false;
  }
  const row: unknown[] = [uid, 0, 0, null]; // id, created, modified, container (ROW), then the fields
  for (const f of fields) {
    let input: unknown;
    let at: Position = { line: 1, column: 1 };
    const given = values.get(f.name);
    if (f.document === 'markdown' && parts.body === undefined) {
      // A YAML document (no front matter): the body is a field like the others.
      input = given?.value ?? '';
      at = given ? pos(given.node ?? given.key) : { line: 1, column: 1 };
    } else if (f.document === 'markdown') {
      if (given !== undefined) {
        diagnostics.at('error', 'LW_CONTENT_DOCUMENT', `"${f.name}" is the document's Markdown body: write it after the front matter, not as a field`, file, pos(given.key));
        ok = false;
      }
      input = parts.body ?? '';
      at = { line: parts.bodyLine, column: 1 };
    } else if (f.document === 'uid' && f.path) {
      input = uid;
      const front = values.get('uid') ?? given;
      if (front !== undefined && typeof front.value === 'string' && front.value !== uid) alias = front.value.replace(/^\/+|\/+$/g, '');
    } else if (f.document === 'date') {
      const date = dateFromPath(uid);
      if (date === undefined) {
        diagnostics.at('error', 'LW_CONTENT_DOCUMENT', `${model.name}.${f.name} is the date in the document's path, but "${uid}" is not a date: name the file 2024-05-06${ext}, 2024-05/06${ext} or 2024/05-06${ext}`, file, { line: 1, column: 1 });
        ok = false;
        continue;
      }
      input = date;
    } else if (given !== undefined) {
      input = given.value;
      at = pos(given.node ?? given.key);
    } else {
      at = { line: parts.firstLine, column: 1 };
    }
    if ((input === undefined || input === null) && f.init !== undefined && f.init !== false) {
      input = initialValue(f);
    }
    const r =
      f.document === 'uid'
        ? checkDocumentUid(f, input)
        : f.document === 'markdown' && typeof input === 'string'
          ? { ok: true as const, value: input } // the app's own text: no length bound
          : checkFieldValue(f, input instanceof Date ? input.toISOString().slice(0, 10) : input, schema);
    if (!r.ok) {
      const missing = input === undefined || input === null || input === '';
      const message = missing && f.document !== 'markdown' ? `${r.message}: add \`${f.name}: …\` to the front matter` : r.message;
      diagnostics.at('error', 'LW_CONTENT_DOCUMENT', `${model.name} document ${uid}: ${message}`, file, at);
      ok = false;
      continue;
    }
    let value = r.value;
    if (f.type === 'timestamp' && typeof value === 'string') value = Date.parse(value);
    if (typeof value === 'bigint') value = Number(value);
    row.push(value === undefined ? null : value);
  }
  if (!ok) return undefined;
  const dateField = fields.findIndex((f) => f.document === 'date');
  if (dateField !== -1) {
    const t = Date.parse(String(row[ROW.fields + dateField]));
    row[ROW.created] = t;
    row[ROW.modified] = t;
  }
  return { file, uid, row, ...(alias === undefined ? {} : { alias }) };
}

/** A document uid: path segments of letters, digits, `-`, `_` and `.`, separated by `/`. */
function checkDocumentUid(f: FieldDefinition, input: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (input === undefined || input === null || input === '') return f.optional ? { ok: true, value: null } : { ok: false, message: `${f.label} is required` };
  if (typeof input !== 'string' || input.length > 200 || !/^[\p{L}\p{N}_.-]+(\/[\p{L}\p{N}_.-]+)*$/u.test(input) || input.split('/').some((s) => s === '.' || s === '..')) {
    return { ok: false, message: `${f.label} must be a path of letters, digits, "-", "_" and "." separated by "/", such as "guides/first-steps"` };
  }
  return { ok: true, value: input };
}

function initialValue(f: FieldDefinition): unknown {
  switch (f.type) {
    case 'boolean':
      return false;
    case 'integer':
      return typeof f.init === 'number' ? f.init : 0;
    case 'options':
      return f.values?.[0]?.value;
    default:
      return undefined;
  }
}

/** Two documents claiming one uid (an alias that is another document's path, or twice the same alias). */
function checkAliases(documents: Map<string, StaticDocument[]>, diagnostics: DiagnosticList): void {
  for (const [model, docs] of documents) {
    const uids = new Set(docs.map((d) => d.uid));
    const seen = new Map<string, string>();
    for (const d of docs) {
      if (d.alias === undefined) continue;
      if (uids.has(d.alias)) {
        diagnostics.error('LW_CONTENT_DOCUMENT', `the uid "${d.alias}" of this ${model} document is the path of another document: remove the uid: line, or change it`, d.file);
      } else if (seen.has(d.alias)) {
        diagnostics.error('LW_CONTENT_DOCUMENT', `the uid "${d.alias}" is claimed by ${seen.get(d.alias)} too: keep it on one document`, d.file);
      } else seen.set(d.alias, d.file);
    }
  }
}
