/**
 * Nested sites (docs/nested-sites.md): `/🔌store.yaml` mounts another site at `/store/`, and
 * `/docs/🔌api.yaml` one at `/docs/api/` (a mount file in a sub-directory mounts below it; not in
 * a private or `{param}` directory, nor inside another nested site). The parent's own files may not
 * answer URLs of the mount (an error at the mount file: checkMountRoutes).
 *
 * - `source:` names the site: a git URL resolved through the local sources map (`--source URL=DIR`,
 *   `LANEWAY_SOURCES`, `laneway.sources.yaml`; a self-hosted server never fetches code), or a path
 *   relative to the app. An unresolved source is a build error naming the flag to add.
 * - The child is loaded as an app of its own — its routes, private files, properties and error
 *   views — and its problems are reported at its files (paths relative to the parent).
 * - Its answers are written for the mount: links in its HTML (`src`, `srcset`, `poster`, a form's
 *   `action`, every attribute whose name ends in `href`, `data-base-href` included), root-absolute
 *   `url(/…)` and `@import '/…'` in its stylesheets (`.css`, compiled `.scss` and inlined private
 *   stylesheets, rewritten once at load: createCatalog, mountCss) and the `Location` of its redirects, when they start with one `/`, get the
 *   mount path in front. Inline scripts and styles of its pages are left as written (their hashes
 *   are in the policy). The auth gate's redirect to the sign-in page (docs/users.md "Nested sites") goes to
 *   the child's `/app/auth/`, and its `next` names the page with the mount path too, since the
 *   sign-in sends the visitor back to `next` as it is (mountSignInRedirect in auth.ts).
 *
 * - A child with database models needs `namespace:`: its data then lives beside the parent's, in
 *   a SQLite file or a PostgreSQL schema of its own (openAppData in stores.ts).
 *
 * - `🎨:` replaces values of the child's `/🎨.scss` before it is read (overrideProperties), so an
 *   override is checked, typed and used everywhere (views, scripts, SCSS) as the original was.
 *
 * Not yet: `keys:` (credentials handed to the child's REST connectors, which Laneway does not
 * have yet): accepted with a warning saying it has no effect.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, parseDocument, type Node, type Pair } from 'yaml';
import { locate, type DiagnosticList } from '../../diag/index.js';
import { resolveSource, type SourcesMap } from '../../content/index.js';
import { formatPattern, type RouteSpec } from '../../router/index.js';
import { AssetCatalog, PIN_ORIGIN, type CatalogOptions } from '../../assets/index.js';
import type { SourceTree } from '../../shared/index.js';
import { isPrivateDir, type ClassifiedFile } from '../definitions/classify.js';
import type { Endpoint, Reply } from '../endpoint/endpoint.js';
import { mountSignInRedirect } from '../services/auth.js';

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
/** Directories a mount may be below: public, literal, and written in URLs without encoding. */
const MOUNT_DIR = /^[A-Za-z0-9._~-]+$/;

/** The `feature:` of a nested site's file that has no `source:`, if it is one. */
function platformFeature(source: string): string | undefined {
  const doc = parseDocument(source);
  if (doc.errors.length > 0 || !isMap(doc.contents)) return undefined;
  const value = (key: string): unknown => (doc.contents as { get(k: string): unknown }).get(key);
  const feature = value('feature');
  return value('source') === undefined && typeof feature === 'string' && feature.trim() !== '' ? feature.trim() : undefined;
}

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
    // `feature:` without `source:`: a site the platform itself provided (its API for the IDE…),
    // which Laneway does not have: nothing is mounted (docs/status.md "What degrades").
    const feature = platformFeature(tree.read(file.path) ?? '');
    if (feature !== undefined) {
      diagnostics.warn(
        'LW_APP_NOT_AVAILABLE',
        `${file.name} mounts the platform's own "${feature}" (\`feature:\`), which Laneway does not have (docs/status.md, "Not available": nested sites the platform provides): nothing is mounted at ${prefix}/, and the rest of the app runs`,
        file.path,
      );
      continue;
    }
    const dirs = file.dir.split('/').slice(1);
    const dynamic = dirs.find((d) => d.includes('{'));
    const odd = dirs.find((d) => !MOUNT_DIR.test(d));
    const why = isPrivateDir(file.dir)
      ? `${file.dir}/ is a private directory, and nothing under it is served`
      : dynamic !== undefined
        ? `the directory ${dynamic} is dynamic, and a nested site is mounted at one fixed path`
        : odd !== undefined
          ? `the directory name ${odd} needs percent-encoding in a URL (use letters, digits, "-", "_", "." and "~")`
          : undefined;
    if (why !== undefined) {
      diagnostics.error('LW_APP_NESTED_SITE', `${file.name} cannot mount a site at ${prefix}/: ${why}; move the file`, file.path);
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
          // docs/nested-sites.md "Credentials: `keys:`": the credentials (api:stripe.com …) the
          // parent lends the child's REST connectors. Laneway has no REST connectors yet
          // (docs/connectors.md), so nothing uses them.
          diagnostics.warn(
            'LW_APP_NESTED_SITE',
            '`keys:` has no effect yet: it lends credentials to the REST connectors of the nested site, which Laneway does not support yet (only connector script tags); the nested site gets no keys',
            file.path,
            source,
            at,
          );
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
          ? `${sourceValue} is not in the local sources map: Laneway never fetches code; add --source ${sourceValue}=DIR (a checkout of that site) to laneway serve and laneway check, set LANEWAY_SOURCES, or map it in laneway.sources.yaml next to the app`
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
  // A mount inside another would never be reached: the outer site answers every URL under it.
  return mounts.filter((m) => {
    const outer = mounts.find((o) => o !== m && m.prefix.startsWith(o.prefix + '/'));
    if (outer === undefined) return true;
    diagnostics.error('LW_APP_NESTED_SITE', `${m.prefix}/ is inside the nested site ${outer.prefix}/ (${outer.file}), which answers every URL under ${outer.prefix}/: mount it from that site, or elsewhere`, m.file);
    return false;
  });
}

/**
 * The parent's own routes that a mount hides (requests under `/docs/api/`, and `/docs/api`
 * itself, go to the nested site): an error at the mount file naming them. Routes with a
 * parameter there (`/docs/{page}`) are not reported: they keep answering their other values.
 */
export function checkMountRoutes(mounts: readonly MountSpec[], routes: ReadonlyArray<{ spec: RouteSpec }>, diagnostics: DiagnosticList): void {
  for (const m of mounts) {
    const parts = m.prefix.split('/').slice(1);
    const hidden = new Map<string, string>();
    for (const { spec } of routes) {
      const segs = spec.segments;
      if (segs.length < parts.length) continue;
      if (!parts.every((p, i) => segs[i]?.type === 'literal' && segs[i].value === p)) continue;
      if (!hidden.has(spec.file)) hidden.set(spec.file, `${spec.method} ${formatPattern(spec)}`);
    }
    if (hidden.size === 0) continue;
    const list = [...hidden].sort(([a], [b]) => (a < b ? -1 : 1)).map(([file, route]) => `${file} (${route})`).join(', ');
    diagnostics.error('LW_APP_NESTED_SITE', `the nested site mounted at ${m.prefix}/ answers every URL under it and ${m.prefix} itself, but this site's own ${hidden.size === 1 ? 'file answers one' : 'files answer some'} of them: ${list}; move or rename ${hidden.size === 1 ? 'it' : 'them'}, or mount the site elsewhere`, m.file);
  }
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
/** Where a script or style element starts; its start tag ends at the next `>`. */
const RAW_TEXT_OPEN = /<(script|style)\b/gi;
const RAW_TEXT_CLOSE: Record<string, RegExp> = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi };

/**
 * The script and style elements of a page, as `/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi`
 * would find them, in one pass: that pattern read the rest of the page again from each start tag
 * that has no end tag (docs/architecture.md "Regular expressions on what a visitor sends"). The
 * next `>` and the next end tag of each name are remembered: once none follows a point, none
 * follows any later one.
 */
export function rawTextElements(html: string): Array<{ start: number; openEnd: number; end: number }> {
  const found: Array<{ start: number; openEnd: number; end: number }> = [];
  let gt = -1;
  const closes = new Map<string, { at: number; end: number }>();
  for (let from = 0; ; ) {
    RAW_TEXT_OPEN.lastIndex = from;
    const m = RAW_TEXT_OPEN.exec(html);
    if (m === null) break;
    const start = m.index;
    if (gt < start + m[0].length) {
      gt = html.indexOf('>', start + m[0].length);
      if (gt === -1) break;
    }
    const openEnd = gt + 1;
    const name = m[1]!.toLowerCase();
    let close = closes.get(name);
    if (close === undefined || (close.at !== -1 && close.at < openEnd)) {
      const re = RAW_TEXT_CLOSE[name]!;
      re.lastIndex = openEnd;
      const c = re.exec(html);
      close = c === null ? { at: -1, end: -1 } : { at: c.index, end: c.index + c[0].length };
      closes.set(name, close);
    }
    if (close.at === -1) {
      from = start + 1;
      continue;
    }
    found.push({ start, openEnd, end: close.end });
    from = close.end;
  }
  return found;
}

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
  for (const e of rawTextElements(html)) {
    out += rewriteTags(html.slice(last, e.openEnd), prefix);
    out += html.slice(e.openEnd, e.end);
    last = e.end;
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

/** Files whose served text is CSS. */
const STYLESHEET = /\.s?css$/i;

/**
 * A stylesheet of a mounted site, its root-absolute URLs written for the mount: `url(/img/a.png)`,
 * `url('/x.woff2')`, `@import '/x.css'` → `/store/img/a.png`… Comments and other strings are left
 * alone, and so are `//host/…`, `https:…`, `data:` and relative URLs.
 */
export function mountCss(css: string, prefix: string): string {
  let out = '';
  let last = 0;
  const n = css.length;
  /**
   * Rewrites the URL at `from` (after spaces): quoted, or when `bare` is allowed (inside `url(`)
   * up to `)` or a space. Returns where scanning resumes: past the URL, or `from` when there is none.
   */
  const urlAt = (from: number, bare: boolean): number => {
    let j = from;
    while (j < n && /\s/.test(css[j]!)) j++;
    const q = css[j];
    let start: number;
    let end: number;
    let resume: number;
    if (q === '"' || q === "'") {
      start = j + 1;
      resume = stringEnd(css, j);
      // An unterminated string ends at its line: nothing is rewritten there.
      if (css[resume - 1] !== q || resume - 1 === j) return resume;
      end = resume - 1;
    } else if (bare) {
      start = j;
      end = j;
      while (end < n && css[end] !== ')' && !/\s/.test(css[end]!)) end++;
      resume = end;
    } else return from;
    const url = css.slice(start, end);
    const next = mountUrl(url, prefix);
    if (next !== url) {
      out += css.slice(last, start) + next;
      last = end;
    }
    return resume;
  };
  for (let i = 0; i < n; ) {
    const c = css[i]!;
    if (c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      i = stringEnd(css, i);
    } else if ((c === 'u' || c === 'U') && /^url\(/i.test(css.slice(i, i + 4)) && !/[\w-]/.test(css[i - 1] ?? '')) {
      i = urlAt(i + 4, true);
    } else if (c === '@' && /^@import[\s'"]/i.test(css.slice(i, i + 8))) {
      // `@import '/x.css'`; `@import url(/x.css)` is found by the url( branch next.
      i = urlAt(i + 7, false);
    } else i++;
  }
  return out + css.slice(last);
}

/** The offset just past the string that starts (with its quote) at `at`. */
function stringEnd(text: string, at: number): number {
  const quote = text[at];
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === quote || c === '\n') return i + 1;
  }
  return text.length;
}

/**
 * The asset catalog of a site; for a nested site (`mount`), one whose stylesheets — `.css` files,
 * compiled `.scss`, and private stylesheets inlined into pages — are written for the mount
 * (mountCss), once per file at load. Their fingerprints are those of the bytes served.
 */
export function createCatalog(options: CatalogOptions, mount: string | undefined): AssetCatalog {
  return mount === undefined ? new AssetCatalog(options) : new MountedCatalog(options, mount);
}

class MountedCatalog extends AssetCatalog {
  readonly #prefix: string;
  readonly #css = new Map<string, Buffer | undefined>();

  constructor(options: CatalogOptions, prefix: string) {
    super(options);
    this.#prefix = prefix;
  }

  override body(path: string): Buffer | undefined {
    if (!STYLESHEET.test(path)) return super.body(path);
    if (!this.#css.has(path)) {
      const css = super.body(path);
      this.#css.set(path, css === undefined ? undefined : Buffer.from(mountCss(css.toString('utf8'), this.#prefix)));
    }
    return this.#css.get(path);
  }

  /**
   * A reference in `content` (`<meta property="og:image" content="/img/📌card.png">`): the page's
   * HTML is written for the mount only in link attributes (mountHtml), so this one gets the mount
   * path here, at load; and so does a pinned URL in any attribute, since it starts with the
   * origin's place (PIN_ORIGIN), which mountHtml leaves alone.
   */
  override rewrite(url: string, from: string, attribute?: string): string | undefined {
    const r = super.rewrite(url, from, attribute);
    if (r?.startsWith(PIN_ORIGIN)) return PIN_ORIGIN + mountUrl(r.slice(PIN_ORIGIN.length), this.#prefix);
    return r !== undefined && attribute === 'content' ? mountUrl(r, this.#prefix) : r;
  }

  override inline(url: string, kind: 'script' | 'style', from: string): ReturnType<AssetCatalog['inline']> {

    const r = super.inline(url, kind, from);
    return kind === 'style' && r !== undefined && 'text' in r ? { text: mountCss(r.text, this.#prefix) } : r;
  }
}

/** An answer of a mounted site, written for the mount: HTML links and redirects. */
export function mountReply(reply: Reply, prefix: string, pages: WeakMap<object, Reply>): Reply {
  switch (reply.type) {
    case 'redirect':
      // The auth gate's redirect to the sign-in page carries the page asked for in `next`: under the mount too (auth.ts).
      return mountSignInRedirect(reply, prefix) ?? { ...reply, location: mountUrl(reply.location, prefix) };
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
