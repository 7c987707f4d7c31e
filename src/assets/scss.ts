/**
 * SCSS stylesheets, compiled at load with dart-sass (the `sass` package, dart-sass compiled to
 * JavaScript), minified, and cached by content hash across loads of the same process.
 *
 * Why not `sass-embedded` (~3× faster on large stylesheets): it ships its compiler as one optional
 * package per platform, and `npm ci` refuses a lockfile that lacks any of them, which happens when
 * a registry mirror carries only some platforms. The pure-JS package installs everywhere.
 *
 * Imports are app paths (REFERENCE §1.6.3): `@import "/dir/name"` reads `/dir/_name.scss`, then
 * `/dir/name.scss` (then `.css`, then `/dir/name/_index.scss`); relative imports resolve against
 * the importing file; `@import '/🎨'` reads the properties file, whose `$variables` become Sass
 * variables (the loader's `read` gives the text as src/content/properties.ts parsed it: one
 * declaration per property, on its own line). Nothing is ever read from outside the app.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import type * as Sass from 'sass';
import type { DiagnosticList } from '../diag/index.js';

export interface ScssSource {
  /** Reads an app file's text; undefined when it does not exist. */
  read(path: string): string | undefined;
}

const SCHEME = 'laneway:';

interface Cached {
  css: string;
  /** Every file the compile read, with the hash of the text it read. */
  deps: Array<[string, string]>;
}

// Compiled stylesheets by path and source hash, for the process: a reload compiles only what changed.
const cache = new Map<string, Cached>();

const sha = (text: string): string => createHash('sha256').update(text).digest('base64url');

function pathOf(url: URL): string {
  return decodeURIComponent(url.pathname);
}

/** The app paths an import of `path` may name, in order. */
function candidates(path: string): string[] {
  const dir = posix.dirname(path);
  const base = posix.basename(path);
  if (/\.(scss|css)$/.test(base)) return base.startsWith('_') ? [path] : [posix.join(dir, '_' + base), path];
  const under = (name: string) => posix.join(dir, name);
  return [under(`_${base}.scss`), under(`${base}.scss`), under(`_${base}.css`), under(`${base}.css`), posix.join(path, '_index.scss'), posix.join(path, 'index.scss')];
}

/** Compiles the app's `.scss` files on demand. */
export class ScssCompiler {
  #sass: typeof Sass | undefined;
  readonly #results = new Map<string, string | null>();

  constructor(
    private readonly source: ScssSource,
    private readonly diagnostics: DiagnosticList,
  ) {}

  /** The minified CSS of an app `.scss` file, or undefined when it does not compile (reported). */
  compile(path: string): string | undefined {
    const known = this.#results.get(path);
    if (known !== undefined) return known ?? undefined;
    const css = this.#compile(path);
    this.#results.set(path, css ?? null);
    return css;
  }

  #compile(path: string): string | undefined {
    const text = this.source.read(path);
    if (text === undefined) return undefined;
    const key = path + '\0' + sha(text);
    const hit = cache.get(key);
    if (hit && hit.deps.every(([p, h]) => {
      const t = this.source.read(p);
      return t !== undefined && sha(t) === h;
    })) {
      return hit.css;
    }
    let compiler: typeof Sass;
    try {
      // Loaded on first use: apps without SCSS never pay for it.
      compiler = this.#sass ??= createRequire(import.meta.url)('sass') as typeof Sass;
    } catch (err) {
      this.diagnostics.error('LW_ASSET_SCSS', `the Sass compiler could not start: ${(err as Error).message}`, path);
      return undefined;
    }
    const read = new Map<string, string>();
    const importer: Sass.Importer<'sync'> = {
      canonicalize: (url, context) => {
        let target: string;
        if (url.startsWith(SCHEME)) target = pathOf(new URL(url));
        else if (url.startsWith('/')) target = decodeURIComponent(url);
        else if (context.containingUrl?.protocol === SCHEME) target = posix.join(posix.dirname(pathOf(context.containingUrl)), decodeURIComponent(url));
        else return null;
        target = posix.normalize(target);
        if (!target.startsWith('/') || target.startsWith('/..')) return null;
        for (const c of candidates(target)) {
          if (this.source.read(c) !== undefined) return new URL(SCHEME + encodeURI(c));
        }
        return null;
      },
      load: (url) => {
        const p = pathOf(url);
        const contents = this.source.read(p);
        if (contents === undefined) return null;
        read.set(p, contents);
        return { contents, syntax: p.endsWith('.css') ? 'css' : 'scss' };
      },
    };
    try {
      const result = compiler.compileString(text, {
        url: new URL(SCHEME + encodeURI(path)),
        syntax: 'scss',
        style: 'compressed',
        importers: [importer],
        logger: { warn() {}, debug() {} },
        charset: false,
      });
      cache.set(key, { css: result.css, deps: [...read].map(([p, t]) => [p, sha(t)]) });
      return result.css;
    } catch (err) {
      const e = err as Sass.Exception;
      const span = e.span as Sass.SourceSpan | undefined;
      const file = span?.url?.protocol === SCHEME ? pathOf(span.url) : path;
      const message = (e.sassMessage ?? (err as Error).message).split('\n')[0];
      const pos = span ? { line: span.start.line + 1, column: span.start.column + 1 } : { line: 1, column: 1 };
      this.diagnostics.at('error', 'LW_ASSET_SCSS', `Sass: ${message}${file !== path ? ` (imported by ${path})` : ''}`, file, pos);
      return undefined;
    }
  }

  /** Releases the compiler at the end of a load (nothing to stop with the pure-JS compiler). */
  dispose(): void {
    this.#sass = undefined;
  }
}
