/**
 * The app's static assets as pages refer to them (docs/assets.md):
 *
 * - fingerprints: a reference to a public asset is rewritten to `/<path>.<hash8>.<ext>`, where
 *   `hash8` is the start of the SHA-256 of the bytes served; that URL never changes meaning and
 *   is cached for a year, while the original path keeps answering with `no-cache`;
 * - pins: `📌name.ext` is served at `name.ext`, for a permanent URL (one day of caching), and a
 *   reference to the pinned path is rewritten to it, after PIN_ORIGIN: each answer of a page that
 *   has one writes the request's origin there (app/request/pins.ts), making the URL absolute;
 * - inlining: `<script src>` or a stylesheet `<link href>` naming a private file (`_x.js`,
 *   `_x.scss`, `_x.css`) is replaced by the file's text, or compiled CSS.
 *
 * Everything is decided at load; the loader turns `served()` into routes.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { Code, DiagnosticList } from '../diag/index.js';
import { ScssCompiler } from './scss.js';

export const PIN = '📌';
/**
 * Where a page's pinned URL gets the origin of the request (docs/assets.md "Pinned files"). The
 * text a view writes from data is escaped, so it never holds a `<`: only the page pass writes this.
 */
export const PIN_ORIGIN = '<!--📌-->';

export interface CatalogFile {
  /** App path. */
  path: string;
  /** Served by its own URL (not private, not configuration). */
  public: boolean;
  /** A file pages may refer to as an asset (not a page, view or script). */
  asset: boolean;
  /** A private asset (`_x.js`, `_dir/x.scss`), which pages may inline; never configuration or suppliers. */
  inlinable: boolean;
  /** Size in bytes. */
  size: number;
}

export interface CatalogOptions {
  files: readonly CatalogFile[];
  /** Reads an app file's text (views, scripts, stylesheets). */
  readText(path: string): string | undefined;
  /** Reads an app file's bytes. */
  readBytes(path: string): Buffer;
  diagnostics: DiagnosticList;
  /** Files larger than this are not fingerprinted (they are streamed, never read at load). */
  memoryLimit: number;
}

/** A URL the loader must answer. */
export interface ServedAsset {
  url: string;
  /** The file whose bytes (or compiled CSS) are served. */
  file: string;
  cacheControl: string;
}

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const PINNED = 'public, max-age=86400';

/** The first 8 hex digits of the SHA-256 of `body`. */
export function contentHash8(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 8);
}

/** `/a/b.css` + hash → `/a/b.<hash>.css` (`/a/LICENSE` → `/a/LICENSE.<hash>`). */
export function fingerprintPath(path: string, hash8: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  if (dot <= slash + 1) return `${path}.${hash8}`;
  return `${path.slice(0, dot)}.${hash8}${path.slice(dot)}`;
}

/** `/a/📌logo.png` → `/a/logo.png`; undefined for a file without the pin. */
export function unpinnedPath(path: string): string | undefined {
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  if (!name.startsWith(PIN) || name.length === PIN.length) return undefined;
  return path.slice(0, slash + 1) + name.slice(PIN.length);
}

/**
 * The app path a URL of a page names, with its `?query#fragment` kept apart. Only paths: a URL with
 * a scheme or a host is not the app's. A relative URL resolves against `from` (a file path).
 */
export function resolveReference(url: string, from: string): { path: string; suffix: string } | undefined {
  const u = url.trim();
  if (u === '' || /^[a-z][a-z0-9+.-]*:/i.test(u) || u.startsWith('//') || u.startsWith('#') || u.startsWith('?')) return undefined;
  const cut = u.search(/[?#]/);
  const raw = cut === -1 ? u : u.slice(0, cut);
  const suffix = cut === -1 ? '' : u.slice(cut);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  const joined = decoded.startsWith('/') ? decoded : posix.join(posix.dirname(from), decoded);
  const path = posix.normalize(joined);
  if (!path.startsWith('/') || path.includes('\0') || path.endsWith('/')) return undefined;
  return { path, suffix };
}

/** Why `text` cannot go inside a `<script>` (or `<style>`) element as is, or undefined. */
export function checkInlineText(kind: 'script' | 'style', text: string): string | undefined {
  if (kind === 'script') {
    if (/<\/script/i.test(text)) return 'it contains "</script", which would end the element early; write "<\\/script" in strings';
    if (/<!--/.test(text)) return 'it contains "<!--", which changes how browsers find the end of a script; write "<\\!--" in strings';
    return undefined;
  }
  if (/<\/style/i.test(text)) return 'it contains "</style", which would end the element early';
  return undefined;
}

type InlineResult = { text: string } | { code: Code; message: string } | undefined;

export class AssetCatalog {
  readonly #files = new Map<string, CatalogFile>();
  /** Pinned files by their served (unpinned) path, and the reverse. */
  readonly #pins = new Map<string, string>();
  readonly #served = new Map<string, ServedAsset>();
  readonly #fingerprints = new Map<string, string | null>();
  readonly #inlined = new Map<string, InlineResult>();
  readonly scss: ScssCompiler;

  constructor(private readonly options: CatalogOptions) {
    for (const f of options.files) {
      this.#files.set(f.path, f);
      const unpinned = f.public && f.asset ? unpinnedPath(f.path) : undefined;
      if (unpinned !== undefined) this.#pins.set(f.path, unpinned);
    }
    this.scss = new ScssCompiler({ read: (p) => options.readText(p) }, options.diagnostics);
  }

  /** The URL a pinned file is served at, when `path` is one. */
  pinnedUrl(path: string): string | undefined {
    return this.#pins.get(path);
  }

  /** The bytes served for a public asset: the file, or the compiled CSS of a `.scss` file. */
  body(path: string): Buffer | undefined {
    if (path.endsWith('.scss')) {
      const css = this.scss.compile(path);
      return css === undefined ? undefined : Buffer.from(css);
    }
    return this.options.readBytes(path);
  }

  /**
   * The URL to write for a static reference in a page (fingerprinted, or unpinned), or undefined
   * to leave it. Relative references are resolved only for routed files: in a partial or layout
   * they are relative to whichever page includes it.
   */
  rewrite(url: string, from: string, _attribute?: string): string | undefined {
    if (!url.trim().startsWith('/') && this.#files.get(from)?.public !== true) return undefined;
    const ref = resolveReference(url, from);
    if (ref === undefined) return undefined;
    const f = this.#files.get(ref.path);
    if (f === undefined || !f.public || !f.asset) return undefined;
    const pinned = this.#pins.get(f.path);
    if (pinned !== undefined) return PIN_ORIGIN + pinned + ref.suffix;
    let target = this.#fingerprints.get(f.path);
    if (target === undefined) {
      target = null;
      if (f.size <= this.options.memoryLimit) {
        const body = this.body(f.path);
        if (body !== undefined) {
          target = fingerprintPath(f.path, contentHash8(body));
          this.#served.set(target, { url: target, file: f.path, cacheControl: IMMUTABLE });
        }
      }
      this.#fingerprints.set(f.path, target);
    }
    return target === null ? undefined : target + ref.suffix;
  }

  /** `<script src>` / stylesheet `<link href>`: the text to inline when the URL names a private file. */
  inline(url: string, kind: 'script' | 'style', from: string): InlineResult {
    const ref = resolveReference(url, from);
    if (ref === undefined) return undefined;
    const f = this.#files.get(ref.path);
    const key = kind + '\0' + ref.path;
    if (this.#inlined.has(key)) return this.#inlined.get(key);
    let result: InlineResult;
    const exts = kind === 'script' ? ['.js', '.mjs'] : ['.css', '.scss'];
    if (f !== undefined && f.public) result = undefined;
    else if (f === undefined) {
      // A missing file whose name says "private" was meant to be inlined.
      result = ref.path.split('/').some((p) => p.startsWith('_'))
        ? { code: 'LW_ASSET_INLINE_MISSING', message: `${ref.path} does not exist: a private ${kind === 'script' ? 'script' : 'stylesheet'} named here is inlined into the page` }
        : undefined;
    } else if (!f.inlinable) {
      result = { code: 'LW_ASSET_INLINE_MISSING', message: `${ref.path} is not a private asset of the app (configuration and supplier files are never sent)` };
    } else if (!exts.some((e) => ref.path.endsWith(e))) {
      result = { code: 'LW_ASSET_INLINE_MISSING', message: `${ref.path} is private and cannot be inlined as a ${kind === 'script' ? 'script' : 'stylesheet'}: use a ${exts.join(' or ')} file` };
    } else {
      const text = ref.path.endsWith('.scss') ? this.scss.compile(ref.path) : this.options.readText(ref.path);
      if (text === undefined) result = { code: 'LW_ASSET_INLINE_MISSING', message: `${ref.path} could not be read or compiled` };
      else {
        const problem = checkInlineText(kind, text);
        result = problem === undefined ? { text } : { code: 'LW_ASSET_INLINE_UNSAFE', message: `${ref.path} cannot be inlined: ${problem}` };
      }
    }
    this.#inlined.set(key, result);
    return result;
  }

  /** The extra URLs to answer: fingerprints of every asset a page referred to. */
  served(): ServedAsset[] {
    return [...this.#served.values()];
  }

  dispose(): void {
    this.scss.dispose();
  }
}
