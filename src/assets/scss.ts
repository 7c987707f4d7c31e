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
 *
 * Compiled stylesheets are kept for the process and, when the command line names a directory
 * (`persistStylesheets`: `laneway check`, `serve` and `dev`), on disk: loading the compiler takes
 * most of a second, more than checking a small app, so a stylesheet compiled once is not compiled
 * again by the next process while it and every file its compilation looked at (the files it
 * imported, and the names it tried that did not exist) are unchanged. Only successful compilations
 * are kept (they report nothing); a stylesheet with an error is compiled again each time.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import type * as Sass from 'sass';
import type { DiagnosticList } from '../diag/index.js';

export interface ScssSource {
  /** Reads an app file's text; undefined when it does not exist. */
  read(path: string): string | undefined;
}

const SCHEME = 'laneway:';

interface Cached {
  css: string;
  /**
   * Every file the compile read, with the hash of the text it read, and every name it tried that
   * did not exist (null): a new `_name.scss` may shadow the `name.scss` an import found.
   */
  deps: Array<[string, string | null]>;
}

// Compiled stylesheets by path and source hash, for the process: a reload compiles only what changed.
const cache = new Map<string, Cached>();

const sha = (text: string): string => createHash('sha256').update(text).digest('base64url');

/** What the compiled CSS depends on besides the files: the compiler's version and the options below. */
let compilerIdentity: string | undefined;
function compilerId(): string {
  if (compilerIdentity === undefined) {
    let version = 'unknown';
    try {
      const main = createRequire(import.meta.url).resolve('sass');
      version = (JSON.parse(readFileSync(join(dirname(main), 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // an unknown version keeps nothing apart from another unknown one: good enough for a cache
    }
    compilerIdentity = `sass ${version}; compressed; laneway importer 1`;
  }
  return compilerIdentity;
}

/** The directory of compiled stylesheets kept between processes, when there is one. */
let persistDir: string | undefined;

/**
 * Keeps compiled stylesheets in `dir` (created when needed) from now on, for this process and the
 * next ones; undefined stops. Problems with the directory are ignored: stylesheets are compiled.
 */
export function persistStylesheets(dir: string | undefined): void {
  persistDir = dir;
}

/** Where a stylesheet's entry is kept on disk: by its path, its text and the compiler. */
function diskKey(key: string): string {
  return createHash('sha256').update(compilerId() + '\0' + key).digest('hex').slice(0, 40) + '.json';
}

function readKept(key: string): Cached | undefined {
  if (persistDir === undefined) return undefined;
  try {
    const entry = JSON.parse(readFileSync(join(persistDir, diskKey(key)), 'utf8')) as Cached;
    const wellFormed =
      typeof entry.css === 'string' &&
      Array.isArray(entry.deps) &&
      entry.deps.every((d: unknown) => Array.isArray(d) && d.length === 2 && typeof d[0] === 'string' && (typeof d[1] === 'string' || d[1] === null));
    return wellFormed ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** Entries kept at most; past that, the older half goes. */
const KEPT_MAX = 1000;

function keep(key: string, entry: Cached): void {
  if (persistDir === undefined) return;
  try {
    mkdirSync(persistDir, { recursive: true, mode: 0o700 });
    const file = join(persistDir, diskKey(key));
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, file);
    const names = readdirSync(persistDir).filter((n) => n.endsWith('.json'));
    if (names.length > KEPT_MAX) {
      const aged = names.map((n) => ({ n, t: statSync(join(persistDir!, n)).mtimeMs })).sort((a, b) => a.t - b.t);
      for (const { n } of aged.slice(0, aged.length - KEPT_MAX / 2)) rmSync(join(persistDir, n), { force: true });
    }
  } catch {
    // a cache that cannot be written is no cache
  }
}

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
    const current = (entry: Cached | undefined): entry is Cached =>
      entry !== undefined &&
      entry.deps.every(([p, h]) => {
        const t = this.source.read(p);
        return h === null ? t === undefined : t !== undefined && sha(t) === h;
      });
    const hit = cache.get(key);
    if (current(hit)) return hit.css;
    const kept = readKept(key);
    if (current(kept)) {
      cache.set(key, kept);
      return kept.css;
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
    const tried = new Set<string>();
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
          tried.add(c);
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
      const entry: Cached = { css: result.css, deps: [...[...read].map(([p, t]): [string, string] => [p, sha(t)]), ...[...tried].map((p): [string, null] => [p, null])] };
      cache.set(key, entry);
      keep(key, entry);
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
