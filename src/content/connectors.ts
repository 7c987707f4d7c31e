/**
 * Connector tags (docs/connectors.md "Tags in views and pages"): `<clicky.com-script async/>` in a
 * view or page becomes the `<script>` the connector defines, and the connector's policy additions
 * join the page's policy.
 *
 * 1. `/🔌.yaml` lists the connectors the app imports: git URLs
 *    (`https://github.com/stacklane-registry/clicky.com.git#!v1.0.1`) or local paths.
 * 2. Each is resolved to a local directory through the sources map (sources.ts); nothing is
 *    fetched. A connector directory holds `/🎛.yaml` (`name: clicky.com`, `type: connector`) and
 *    one file per tag in `/<>/`: `/<>/script.yaml` defines `<clicky.com-script/>` as
 *        script: {src: https://…, integrity: sha384-…, async: true, defer: false}
 *        csp: {script-src: https://…, connect-src: [https://…]}
 *    Definitions are read and checked once, at load; a malformed one is an error at its line.
 * 3. The page pass (src/csp/scan.ts) asks `Connectors.expand` about every element whose name has a
 *    dot. A name `<domain>-<tag>` (the domain ends at the first `-` after its last dot) is a
 *    connector tag: it becomes the defined script, with the written `async`, `defer`, `id` and
 *    `data-*` attributes passed through; the page pass then reads that script as any other
 *    `<script src>` (its URL joins `script-src`) and adds the tag's `csp:` sources. When the
 *    connector is not available, or defines no such tag, the element is removed with a warning.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { checkSource, type Directive, type ElementExpansion, type ElementUse } from '../csp/index.js';
import type { Code, DiagnosticList } from '../diag/index.js';
import { normalizeName, yamlToJS, type SourceTree } from '../shared/index.js';
import { resolveSource, sourceName, type SourcesMap } from './sources.js';

/** The app file listing the connectors it imports. */
export const CONNECTORS_FILE = '/🔌.yaml';
/** The directory of tag definitions in a connector repository. */
const TAGS_DIR = '<>';

const LABELS = '(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+[a-z]{2,63}';
/** A connector's name: a domain, `clicky.com`. */
const DOMAIN = new RegExp(`^${LABELS}$`);
/** A tag's name: its file name in `/<>/` without extension. */
const TAG_NAME = /^[a-z0-9][a-z0-9_-]*$/;
/** An element naming a connector tag: `<domain>-<tag>`. Tags have no dot, so the split is unique. */
const ELEMENT = new RegExp(`^(${LABELS})-([a-z0-9][a-z0-9_-]*)$`);
/** Attributes passed from the element to its script; everything else is an error. */
const PASSED = /^(?:async|defer|id|data-[^\s]+)$/;
/** Directives a tag's `csp:` may add to (those a page may add to: policy.ts `Directive`). */
const DIRECTIVES = new Set<Directive>(['script-src', 'style-src', 'img-src', 'font-src', 'connect-src', 'frame-src', 'media-src', 'manifest-src']);
/** A placeholder in a tag's script URL, filled from the tag's attribute of that name. */
const PLACEHOLDER = /\{([a-z][a-z0-9_-]*)\}/g;
const INTEGRITY = /^(?:sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2})(?:\s+sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2})*$/;

/** One tag definition, checked. */
interface TagDefinition {
  /** The script's URL; `{name}` placeholders (after the host) are filled from the tag's attributes. */
  src: string;
  /** The attribute names `src` has placeholders for, in order. */
  placeholders: string[];
  integrity?: string;
  async: boolean;
  defer: boolean;
  csp: Array<{ directive: Directive; sources: string[] }>;
}

/** An imported connector; `tags` maps a name to its definition, or to null when it has errors. */
interface Connector {
  /** As written in /🔌.yaml. */
  source: string;
  name: string;
  /** Why the connector is not usable; undefined when it is. */
  unavailable?: { message: string } | { silent: true };
  tags: Map<string, TagDefinition | null>;
}

/** The connectors of an app, read at load; `expand` answers the page pass. */
export class Connectors {
  readonly #byName: ReadonlyMap<string, Connector>;

  constructor(byName: ReadonlyMap<string, Connector>) {
    this.#byName = byName;
  }

  /** The names of the imported connectors (available or not). */
  get names(): string[] {
    return [...this.#byName.keys()];
  }

  /**
   * What replaces a custom element: undefined when its name is not a connector tag; otherwise the
   * connector's script (or nothing), the policy sources it adds, and the problems to report.
   */
  expand(use: ElementUse): ElementExpansion | undefined {
    const m = ELEMENT.exec(use.name);
    if (m === null) return undefined;
    const domain = m[1]!;
    const tagName = m[2]!;
    const removed = (code: Code, message: string): ElementExpansion => ({ html: '', sources: [], problems: [{ severity: 'warning', code, message }] });
    const c = this.#byName.get(domain);
    if (c === undefined) {
      return removed(
        'LW_CONTENT_CONNECTOR_UNKNOWN_TAG',
        `<${use.name}/> is a tag of the connector ${domain}, which ${CONNECTORS_FILE} does not import${this.#byName.size ? ` (it imports ${this.names.join(', ')})` : ''}: add the connector's git URL to ${CONNECTORS_FILE} and map it to a local copy with --source URL=DIR; the tag is removed`,
      );
    }
    if (c.unavailable !== undefined) {
      if ('silent' in c.unavailable) return { html: '', sources: [], problems: [] };
      return removed('LW_CONTENT_CONNECTOR_UNAVAILABLE', `<${use.name}/>: the connector ${domain} is not available: ${c.unavailable.message}; the tag is removed`);
    }
    const def = c.tags.get(tagName);
    if (def === null) return { html: '', sources: [], problems: [] };
    if (def === undefined) {
      const known = [...c.tags.keys()].map((t) => `<${domain}-${t}/>`);
      return removed('LW_CONTENT_CONNECTOR_UNKNOWN_TAG', `the connector ${domain} defines no tag "${tagName}" (${known.length ? `its tags: ${known.join(', ')}` : 'it defines no tags'}); the tag is removed`);
    }
    const problems: Array<ElementExpansion['problems'][number]> = [];
    const written = new Set<string>();
    const passed: string[] = [];
    const filled = new Map<string, string>();
    for (const a of use.attrs) {
      // style= and on*= are refused on every element by the page pass already.
      if (a.name === 'style' || a.name.startsWith('on')) continue;
      // An attribute the definition's src has a placeholder for fills it (`{site}` ← site="101").
      if (def.placeholders.includes(a.name) && !filled.has(a.name) && a.value !== null) filled.set(a.name, decodeReferences(a.value));
      if (!PASSED.test(a.name)) {
        if (def.placeholders.includes(a.name)) continue;
        problems.push({
          severity: 'error',
          code: 'LW_CONTENT_CONNECTOR_ATTRIBUTE',
          message: `${a.name} is not passed to the script of <${use.name}/>: a connector tag takes async, defer, id and data-* attributes; the connector defines the rest (src, integrity)`,
          attribute: a.name,
        });
        continue;
      }
      if (written.has(a.name)) continue;
      written.add(a.name);
      passed.push(a.text);
    }
    const missing = def.placeholders.filter((n) => !filled.has(n));
    if (missing.length > 0) {
      problems.push({
        severity: 'error',
        code: 'LW_CONTENT_CONNECTOR_ATTRIBUTE',
        message: `<${use.name}/> needs ${missing.map((n) => `${n}="…"`).join(' and ')}: the connector's script URL is ${def.src}`,
      });
    }
    const src = def.src.replace(PLACEHOLDER, (_m, name: string) => encodeURIComponent(filled.get(name) ?? ''));
    const attrs = [`src="${escapeAttribute(src)}"`];
    if (def.integrity !== undefined) attrs.push(`integrity="${escapeAttribute(def.integrity)}"`, 'crossorigin="anonymous"');
    if (def.async && !written.has('async')) attrs.push('async');
    if (def.defer && !written.has('defer')) attrs.push('defer');
    attrs.push(...passed);
    return { html: `<script ${attrs.join(' ')}></script>`, sources: def.csp, problems };
  }
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** An attribute value as written → its text: numeric references and the five basic names (others stay as written). */
function decodeReferences(value: string): string {
  return value.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g, (whole, dec?: string, hex?: string, name?: string) => {
    if (name !== undefined) return NAMED[name]!;
    const code = dec !== undefined ? Number(dec) : parseInt(hex!, 16);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

function escapeAttribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export interface ConnectorOptions {
  /** The app directory (relative source paths start there; connector files are reported relative to it). */
  root: string;
  sources: SourcesMap;
  diagnostics: DiagnosticList;
}

/** Reads `/🔌.yaml` and every connector it names that the sources map makes available. */
export function readConnectors(tree: SourceTree, options: ConnectorOptions): Connectors {
  const { diagnostics } = options;
  const byName = new Map<string, Connector>();
  const text = tree.read(CONNECTORS_FILE);
  if (text === undefined) return new Connectors(byName);
  const doc = parseDocument(text);
  if (reportYamlErrors(doc, CONNECTORS_FILE, text, diagnostics, 'LW_CONTENT_CONNECTOR_LIST')) return new Connectors(byName);
  const list = doc.contents;
  if (list === null || (isScalar(list) && (list.value === null || list.value === ''))) return new Connectors(byName);
  if (!isSeq(list)) {
    diagnostics.error('LW_CONTENT_CONNECTOR_LIST', `${CONNECTORS_FILE} is a list of connector git URLs, one per line as "- https://github.com/owner/clicky.com.git#!v1.0.1"`, CONNECTORS_FILE, text, 0);
    return new Connectors(byName);
  }
  for (const item of list.items) {
    const at = (item as { range?: number[] } | null)?.range?.[0] ?? 0;
    if (!isScalar(item) || typeof item.value !== 'string' || item.value.trim() === '') {
      diagnostics.error('LW_CONTENT_CONNECTOR_LIST', `each entry of ${CONNECTORS_FILE} is a connector's git URL (https://github.com/owner/clicky.com.git#!v1.0.1) or a path to a local copy`, CONNECTORS_FILE, text, at);
      continue;
    }
    const source = item.value.trim();
    const connector = readConnector(source, options);
    const twice = byName.get(connector.name);
    if (twice !== undefined) {
      diagnostics.error('LW_CONTENT_CONNECTOR_LIST', `the connector ${connector.name} is imported twice (also as ${twice.source}): keep one entry`, CONNECTORS_FILE, text, at);
      continue;
    }
    byName.set(connector.name, connector);
  }
  return new Connectors(byName);
}

/** One entry of /🔌.yaml: its directory through the sources map, then its definitions. */
function readConnector(source: string, options: ConnectorOptions): Connector {
  const expected = sourceName(source);
  const where = resolveSource(source, options.sources, options.root);
  const tags = new Map<string, TagDefinition | null>();
  if (!where.found) {
    const message =
      where.reason === 'unmapped'
        ? `no local copy of ${source} is configured (Laneway never fetches code while it runs): start Laneway with --source ${source}=DIR, DIR being a copy of the connector's repository (or set LANEWAY_SOURCES)`
        : where.via === 'map'
          ? `the directory ${where.dir}, given for ${source}, does not exist: fix the --source ${source}=DIR flag (or LANEWAY_SOURCES)`
          : `the directory ${where.dir}, named in ${CONNECTORS_FILE}, does not exist`;
    return { source, name: expected, unavailable: { message }, tags };
  }
  const dir = where.dir;
  const display = (path: string): string => {
    const rel = relative(options.root, path).split(sep).join('/');
    return rel.startsWith('..') ? rel : '/' + rel;
  };
  const { diagnostics } = options;
  const broken: Connector = { source, name: expected, unavailable: { silent: true }, tags };

  // The manifest: name (a domain) and type: connector.
  const manifestName = listNames(dir).get('🎛.yaml');
  const manifestFile = join(dir, manifestName ?? '🎛.yaml');
  const text = manifestName === undefined ? undefined : readText(manifestFile);
  if (text === undefined) {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', `the connector ${source} has no /🎛.yaml in ${dir}: a connector repository names itself there (name: ${expected}, type: connector)`, display(manifestFile));
    return broken;
  }
  const doc = parseDocument(text);
  if (reportYamlErrors(doc, display(manifestFile), text, diagnostics, 'LW_CONTENT_CONNECTOR_DEFINITION')) return broken;
  const js = yamlToJS(doc);
  if ('error' in js) {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', js.error, display(manifestFile), text, js.offset);
    return broken;
  }
  const root = js.value;
  const manifest = root !== null && typeof root === 'object' && !Array.isArray(root) ? (root as Record<string, unknown>) : {};
  const name = typeof manifest.name === 'string' ? manifest.name.trim().toLowerCase() : '';
  if (!DOMAIN.test(name)) {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', `a connector's name: is its domain, such as name: ${DOMAIN.test(expected) ? expected : 'clicky.com'}; found ${JSON.stringify(manifest.name ?? null)}`, display(manifestFile), text, offsetOf(doc, ['name']));
    return broken;
  }
  if (manifest.type !== 'connector') {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', `${source} is not a connector: its /🎛.yaml says type: ${String(manifest.type ?? '(none)')}; a connector repository says type: connector`, display(manifestFile), text, offsetOf(doc, ['type']));
    return { ...broken, name };
  }

  // The tags: /<>/<tag>.yaml.
  const tagsDir = join(dir, TAGS_DIR);
  for (const [file, actual] of [...listNames(tagsDir)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const m = /^(.*)\.ya?ml$/i.exec(file);
    if (m === null) continue;
    const path = join(tagsDir, actual);
    const tag = m[1]!.toLowerCase();
    if (!TAG_NAME.test(tag)) {
      diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', `"${m[1]}" cannot name a tag: use lower-case letters, digits, "-" and "_" (the element is <${name}-${tag}/>)`, display(path));
      continue;
    }
    tags.set(tag, readTag(path, display(path), diagnostics));
  }
  return { source, name, tags };
}

/** One `/<>/<tag>.yaml`: `script: {src, integrity, async, defer}` and `csp: {directive: value|list}`. */
function readTag(path: string, file: string, diagnostics: DiagnosticList): TagDefinition | null {
  const text = readText(path);
  if (text === undefined) {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', 'cannot read this tag definition', file);
    return null;
  }
  const doc = parseDocument(text);
  if (reportYamlErrors(doc, file, text, diagnostics, 'LW_CONTENT_CONNECTOR_DEFINITION')) return null;
  let ok = true;
  const fail = (message: string, at: string[], where: 'key' | 'value' = 'value'): void => {
    ok = false;
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', message, file, text, offsetOf(doc, at, where));
  };
  const js = yamlToJS(doc);
  if ('error' in js) {
    diagnostics.error('LW_CONTENT_CONNECTOR_DEFINITION', js.error, file, text, js.offset);
    return null;
  }
  const data = js.value;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    fail('a tag definition is a map: script: {src: https://…, integrity: sha384-…, async: true} and, optionally, csp: {connect-src: https://…}', []);
    return null;
  }
  const root = data as Record<string, unknown>;
  for (const key of Object.keys(root)) {
    if (key === 'script' || key === 'csp') continue;
    diagnostics.warn(
      'LW_CONTENT_CONNECTOR_DEFINITION',
      key === 'link' ? 'link: tags (stylesheets) are not supported yet; this part of the tag is ignored' : `${key}: is not a key of a tag definition (script, csp); it is ignored`,
      file,
      text,
      offsetOf(doc, [key], 'key'),
    );
  }
  const script = root.script;
  let src = '';
  const placeholders: string[] = [];
  let integrity: string | undefined;
  let async = false;
  let defer = false;
  if (script === null || typeof script !== 'object' || Array.isArray(script)) {
    fail('script: is a map with the script\'s src (an https:// URL) and, usually, integrity and async', script === undefined ? [] : ['script']);
  } else {
    const s = script as Record<string, unknown>;
    for (const key of Object.keys(s)) if (!['src', 'integrity', 'async', 'defer'].includes(key)) fail(`script.${key} is not a script key: use src, integrity, async, defer`, ['script', key], 'key');
    let url: URL | undefined;
    const written = typeof s.src === 'string' ? s.src.trim() : undefined;
    // `{name}` placeholders stand for the tag's attributes, after the host only: the origin is the policy's.
    const authorityEnd = written === undefined ? -1 : written.indexOf('/', written.indexOf('//') + 2);
    const early = written !== undefined && written.indexOf('{') >= 0 && (authorityEnd < 0 || written.indexOf('{') < authorityEnd);
    try {
      url = written !== undefined && !early ? new URL(written.replace(PLACEHOLDER, 'x')) : undefined;
    } catch {
      url = undefined;
    }
    if (early) fail(`script.src has a {placeholder} before its path; the host must be written out: ${JSON.stringify(written)}`, ['script', 'src']);
    else if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || /[{}]/.test(written!.replace(PLACEHOLDER, 'x'))) {
      fail(`script.src is the absolute https:// URL of the script; found ${JSON.stringify(s.src ?? null)}`, ['script', 'src']);
    } else {
      src = written!;
      for (const m of src.matchAll(PLACEHOLDER)) if (!placeholders.includes(m[1]!)) placeholders.push(m[1]!);
    }
    if (s.integrity !== undefined) {
      if (typeof s.integrity === 'string' && INTEGRITY.test(s.integrity.trim())) integrity = s.integrity.trim();
      else fail(`script.integrity is a hash of the script, sha384-… (base64); found ${JSON.stringify(s.integrity)}`, ['script', 'integrity']);
    }
    for (const key of ['async', 'defer'] as const) {
      // `optional`: the tag decides (`<x.com-script async/>`), as with false; written attributes pass through.
      if (s[key] === undefined || s[key] === 'optional') continue;
      if (typeof s[key] === 'boolean') {
        if (key === 'async') async = s[key] as boolean;
        else defer = s[key] as boolean;
      } else fail(`script.${key} is true, false or optional, not ${JSON.stringify(s[key])}`, ['script', key]);
    }
  }
  const csp: TagDefinition['csp'] = [];
  if (root.csp !== undefined && root.csp !== null) {
    if (typeof root.csp !== 'object' || Array.isArray(root.csp)) fail('csp: is a map of directive → source or list of sources, such as csp: {connect-src: [https://in.example.com]}', ['csp']);
    else {
      for (const [directive, value] of Object.entries(root.csp as Record<string, unknown>)) {
        if (!DIRECTIVES.has(directive as Directive)) {
          fail(`csp.${directive}: a connector may add sources to ${[...DIRECTIVES].join(', ')}`, ['csp', directive], 'key');
          continue;
        }
        const values = typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
        if (values === undefined) {
          fail(`csp.${directive} is a source or a list of sources (https://in.example.com), not ${JSON.stringify(value)}`, ['csp', directive]);
          continue;
        }
        const sources: string[] = [];
        for (const token of values.flatMap((v) => v.split(/\s+/)).filter(Boolean)) {
          const lower = token.toLowerCase();
          const problem =
            lower === "'none'" ? "'none' cannot be added to a directive" : lower === "'unsafe-inline'" ? "a connector cannot allow 'unsafe-inline': it would switch off the hashes of every inline block of the page" : checkSource(token);
          if (problem !== undefined) fail(`csp.${directive}: "${token}" is not a source a connector may add: ${problem}`, ['csp', directive]);
          else sources.push(/^'[a-z-]+'$/i.test(token) ? lower : token);
        }
        if (sources.length) csp.push({ directive: directive as Directive, sources });
      }
    }
  }
  return ok ? { src, placeholders, integrity, async, defer, csp } : null;
}

/** The names of a directory's entries, normalised (NFC, no U+FE0F) → as on disk; empty when none. */
function listNames(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) return out;
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) out.set(normalizeName(n), n);
  return out;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Reports YAML syntax errors at their line; true when there were any. */
function reportYamlErrors(doc: Document, file: string, text: string, diagnostics: DiagnosticList, code: Code): boolean {
  for (const err of doc.errors) {
    const pos = err.linePos?.[0];
    if (pos) diagnostics.at('error', code, `YAML: ${err.message.split('\n')[0]}`, file, { line: pos.line, column: pos.col });
    else diagnostics.error(code, `YAML: ${err.message}`, file, text, err.pos[0]);
  }
  return doc.errors.length > 0;
}

/** The offset of the value (or key) at `path`, or of the deepest key found on the way, for problems. */
function offsetOf(doc: Document, path: readonly string[], where: 'key' | 'value' = 'value'): number {
  let node: unknown = doc.contents;
  let at = (node as { range?: number[] } | null)?.range?.[0] ?? 0;
  for (const key of path) {
    if (!isMap(node)) break;
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
    if (pair === undefined) break;
    at = (pair.key as { range?: number[] }).range?.[0] ?? at;
    node = pair.value;
    const r = (node as { range?: number[] } | null)?.range;
    if (r !== undefined && where === 'value' && path[path.length - 1] === key) at = r[0]!;
  }
  return at;
}

