/**
 * Nested sites (REFERENCE §8.3): `/🔌store.yaml` mounts another site at `/store/`.
 *
 * - `source:` names the site: a git URL resolved through the local sources map (`--source URL=DIR`,
 *   `LANEWAY_SOURCES`; a self-hosted server never fetches code), or a path relative to the app. An
 *   unresolved source is a build error naming the flag to add.
 * - The child is loaded as an app of its own — its routes, private files, properties and error
 *   views — and its problems are reported at its files (paths relative to the parent).
 * - Its answers are written for the mount: links in its HTML (`src`, `srcset`, `poster`, a form's
 *   `action`, every attribute whose name ends in `href`, `data-base-href` included) and the
 *   `Location` of its redirects, when they start with one `/`, get the mount path in front.
 *   Inline scripts and styles are left as written (their hashes are in the policy).
 *
 * - A child with database models needs `namespace:`: its data then lives beside the parent's, in
 *   a SQLite file or a PostgreSQL schema of its own (openAppData in data.ts).
 *
 * - `🎨:` replaces values of the child's `/🎨.scss` before it is read (overrideProperties), so an
 *   override is checked, typed and used everywhere (views, scripts, SCSS) as the original was.
 *
 * Not yet: `keys:`; reported, not ignored silently.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, parseDocument, type Node, type Pair } from 'yaml';
import { locate, type DiagnosticList } from '../diag/index.js';
import { resolveSource, type SourcesMap } from '../content/index.js';
import type { SourceTree } from '../shared/index.js';
import type { ClassifiedFile } from './classify.js';
import type { Endpoint, Reply } from './endpoint.js';

/** A nested site: where it is mounted and the file that mounts it. */
export interface MountSpec {
  /** `/store` (no trailing slash). */
  prefix: string;
  file: string;
  dir: string;
  /** `namespace:`: where a child with models keeps its data (4–25 of a-z, 0-9 and -). */
  namespace?: string;
  /** `🎨:`: values replacing the child's properties, by name as written (`the-color`). */
  properties?: Record<string, string | number | boolean>;
}

const NAMESPACE = /^[a-z0-9][a-z0-9-]{2,23}[a-z0-9]$/;

const HTML = /^text\/html/;
/** Mount names: what a URL segment holds without encoding. */
const MOUNT_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/** The `/🔌name.yaml` files of an app, checked and resolved (errors go to `diagnostics`). */
export function readMounts(files: readonly ClassifiedFile[], tree: SourceTree, root: string, sources: SourcesMap, diagnostics: DiagnosticList): MountSpec[] {
  const mounts: MountSpec[] = [];
  for (const file of files) {
    if (file.kind !== 'nested-site') continue;
    const name = file.name.slice('🔌'.length, -'.yaml'.length);
    const prefix = `${file.dir}/${name}`;
    if (!MOUNT_NAME.test(name)) {
      diagnostics.error('LW_APP_NESTED_SITE', `"${name}" is not a mount name: use lowercase letters, digits, "-", "_" and "." (the site is served at ${file.dir}/${name}/)`, file.path);
      continue;
    }
    const source = tree.read(file.path) ?? '';
    const doc = parseDocument(source);
    if (doc.errors.length > 0) {
      for (const err of doc.errors) diagnostics.error('LW_APP_YAML', `invalid YAML: ${err.message.split('\n')[0]}`, file.path, source, err.pos[0]);
      continue;
    }
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) {
      diagnostics.warn('LW_APP_NESTED_SITE', `${file.name} is empty, so it mounts nothing at ${prefix}/: add \`source:\` (a git URL or a path to the site)`, file.path);
      continue;
    }
    if (!isMap(doc.contents)) {
      diagnostics.error('LW_APP_NESTED_SITE', 'a nested site is a map with `source:` (a git URL or a path), such as `source: https://github.com/owner/store.git`', file.path);
      continue;
    }
    let sourceValue: string | undefined;
    let sourceAt = 0;
    let namespace: string | undefined;
    let properties: Record<string, string | number | boolean> | undefined;
    for (const pair of doc.contents.items as Array<Pair<Node | null, Node | null>>) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      const at = pair.key?.range?.[0] ?? 0;
      switch (key) {
        case 'source':
          if (isScalar(pair.value) && typeof pair.value.value === 'string' && pair.value.value.trim()) {
            sourceValue = pair.value.value.trim();
            sourceAt = pair.value.range?.[0] ?? at;
          } else diagnostics.error('LW_APP_NESTED_SITE', '`source:` takes a git URL or a path to the site', file.path, source, at);
          break;
        case 'namespace':
          if (isScalar(pair.value) && typeof pair.value.value === 'string' && NAMESPACE.test(pair.value.value)) namespace = pair.value.value;
          else diagnostics.error('LW_APP_NESTED_SITE', '`namespace:` takes 4 to 25 lowercase letters, digits and "-" (not at either end), such as `namespace: store-data`; never change it once the site holds data', file.path, source, at);
          break;
        case '🎨': {
          const map = isMap(pair.value) ? (pair.value.toJSON() as Record<string, unknown>) : undefined;
          const ok = map !== undefined && Object.entries(map).every(([k, v]) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) && ['string', 'number', 'boolean'].includes(typeof v));
          if (ok) properties = map as Record<string, string | number | boolean>;
          else diagnostics.error('LW_APP_NESTED_SITE', '`🎨:` maps property names of the nested site to values (text, numbers, true/false), such as `🎨: {the-color: aliceblue}`', file.path, source, at);
          break;
        }
        case 'keys':
          diagnostics.warn('LW_APP_NESTED_SITE', `\`${key}:\` of a nested site is not supported yet and is ignored`, file.path, source, at);
          break;
        case 'feature':
          diagnostics.warn('LW_APP_NESTED_SITE', '`feature:` is internal to the platform and is ignored', file.path, source, at);
          break;
        default:
          diagnostics.error('LW_APP_NESTED_SITE', `unknown key "${key}": a nested site takes source (and namespace, 🎨, keys)`, file.path, source, at);
      }
    }
    if (sourceValue === undefined) {
      if (!doc.contents.items.some((p) => isScalar(p.key) && p.key.value === 'source')) diagnostics.error('LW_APP_NESTED_SITE', 'a nested site needs `source:` (a git URL or a path to the site)', file.path);
      continue;
    }
    const r = resolveSource(sourceValue, sources, root);
    if (!r.found) {
      const pos = locate(source, sourceAt);
      const why =
        r.reason === 'unmapped'
          ? `${sourceValue} is not in the local sources map: Laneway never fetches code; add --source ${sourceValue}=DIR (a checkout of that site) to laneway serve and laneway check, or set LANEWAY_SOURCES`
          : `the source ${sourceValue} leads to ${r.dir}, which is not a directory`;
      diagnostics.at('error', 'LW_APP_NESTED_SITE', why, file.path, pos);
      continue;
    }
    if (namespace !== undefined && mounts.some((m) => m.namespace === namespace)) {
      diagnostics.error('LW_APP_NESTED_SITE', `the namespace "${namespace}" is used by another nested site: each keeps its data apart`, file.path);
      continue;
    }
    mounts.push({ prefix, file: file.path, dir: r.dir, ...(namespace === undefined ? {} : { namespace }), ...(properties === undefined ? {} : { properties }) });
  }
  return mounts;
}

/** The real path of a directory (for cycle checks), or the path itself. */
export function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

const TAG = /<([a-zA-Z][a-zA-Z0-9-]*)(\s[^<>]*?)?(\/?)>/g;
const ATTR = /(\s)([^\s"'=<>/]+)(\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/g;
const RAW_TEXT = /<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;

/** Whether an attribute of an element holds a URL the mount rewrites. */
function isLinkAttribute(tag: string, name: string): boolean {
  const n = name.toLowerCase();
  return n.endsWith('href') || n === 'src' || n === 'srcset' || n === 'poster' || (n === 'action' && tag.toLowerCase() === 'form');
}

/** `/a` → `/store/a`; `//host`, `https:`, `#x`, relative paths stay. */
export function mountUrl(url: string, prefix: string): string {
  return url.startsWith('/') && !url.startsWith('//') && !url.startsWith('/\\') ? prefix + url : url;
}

function rewriteSrcset(value: string, prefix: string): string {
  return value
    .split(',')
    .map((part) => part.replace(/^(\s*)(\S+)/, (_m, space: string, url: string) => space + mountUrl(url, prefix)))
    .join(',');
}

/** HTML of a mounted site, its links written for the mount (see the top of this file). */
export function mountHtml(html: string, prefix: string): string {
  let out = '';
  let last = 0;
  // Script and style bodies stay as written: their hashes are in the page's policy.
  for (const m of html.matchAll(RAW_TEXT)) {
    const openEnd = html.indexOf('>', m.index!) + 1;
    out += rewriteTags(html.slice(last, openEnd), prefix);
    out += html.slice(openEnd, m.index! + m[0].length);
    last = m.index! + m[0].length;
  }
  return out + rewriteTags(html.slice(last), prefix);
}

function rewriteTags(fragment: string, prefix: string): string {
  return fragment.replace(TAG, (whole, tag: string, attrs: string | undefined, slash: string) => {
    if (!attrs) return whole;
    const rewritten = attrs.replace(ATTR, (a, space: string, name: string, eq: string, dq?: string, sq?: string, bare?: string) => {
      if (!isLinkAttribute(tag, name)) return a;
      const value = dq ?? sq ?? bare ?? '';
      const next = name.toLowerCase() === 'srcset' ? rewriteSrcset(value, prefix) : mountUrl(value, prefix);
      if (next === value) return a;
      const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : '';
      return `${space}${name}${eq}${quote}${next}${quote}`;
    });
    return `<${tag}${rewritten}${slash}>`;
  });
}

/** An answer of a mounted site, written for the mount: HTML links and redirects. */
export function mountReply(reply: Reply, prefix: string, pages: WeakMap<object, Reply>): Reply {
  switch (reply.type) {
    case 'redirect':
      return { ...reply, location: mountUrl(reply.location, prefix) };
    case 'body': {
      if (!HTML.test(reply.contentType)) return reply;
      // The same reply again (a content page answered from memory): its rewrite is kept with it.
      let page = pages.get(reply);
      if (!page) {
        page = { ...reply, body: mountHtml(typeof reply.body === 'string' ? reply.body : reply.body.toString('utf8'), prefix), etag: reply.etag ? true : false };
        pages.set(reply, page);
      }
      return page;
    }
    case 'asset': {
      // A plain HTML page (made once at load): rewritten once, then answered from the rewrite.
      const asset = reply.asset;
      if (!HTML.test(asset.type) || asset.body === undefined) return reply;
      let page = pages.get(asset);
      if (!page) {
        const body = Buffer.from(mountHtml(asset.body.toString('utf8'), prefix));
        page = { type: 'body', status: reply.status ?? 200, contentType: asset.type, body, headers: { 'Cache-Control': asset.cacheControl, ...reply.headers }, etag: true };
        pages.set(asset, page);
      }
      return page;
    }
    default:
      return reply;
  }
}

/** An endpoint of a mounted site, its answers written for the mount. */
export function mountEndpoint(endpoint: Endpoint, prefix: string): Endpoint {
  const pages = new WeakMap<object, Reply>();
  const inner = endpoint.handle.bind(endpoint);
  return {
    ...endpoint,
    handle(req) {
      const r = inner(req);
      return r instanceof Promise ? r.then((x) => mountReply(x, prefix, pages)) : mountReply(r, prefix, pages);
    },
  };
}

/**
 * The text of a properties file with the values of `overrides` (by name as written, `$` left out)
 * in place of the declared ones; `unknown` gets the names the file does not declare. Strings are
 * written quoted, numbers and booleans as they are.
 */
export function overrideProperties(source: string, overrides: Readonly<Record<string, string | number | boolean>>, unknown: (name: string) => void): string {
  const found = new Set<string>();
  let out = '';
  let i = 0;
  const decl = /\$([A-Za-z_][A-Za-z0-9_-]*)\s*:/g;
  for (let m = decl.exec(source); m !== null; m = decl.exec(source)) {
    // A declaration starts its line (after white space).
    const lineStart = source.lastIndexOf('\n', m.index) + 1;
    if (source.slice(lineStart, m.index).trim() !== '') continue;
    const name = m[1]!;
    const end = valueEnd(source, decl.lastIndex);
    decl.lastIndex = end;
    if (!Object.hasOwn(overrides, name)) continue;
    found.add(name);
    const v = overrides[name]!;
    // A value written unquoted (a color, a url(), a size) stays unquoted, so it keeps its kind.
    const quoted = /^\s*['"]/.test(source.slice(m.index + m[0].length, end));
    const plain = typeof v !== 'string' || (!quoted && /^[^;{}'"\n\\!]*$/.test(v));
    const text = plain ? String(v) : "'" + v.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\a ') + "'";
    out += source.slice(i, m.index + m[0].length) + ' ' + text;
    i = end;
  }
  for (const name of Object.keys(overrides)) if (!found.has(name)) unknown(name);
  return out + source.slice(i);
}

/** Where a declaration's value ends: its `;` (or `!default`) outside quotes and parentheses, or the end. */
function valueEnd(source: string, from: number): number {
  let quote = '';
  let depth = 0;
  for (let i = from; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && (c === ';' || (c === '!' && source.startsWith('!default', i)))) return i;
  }
  return source.length;
}
