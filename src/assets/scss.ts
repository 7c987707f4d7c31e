/**
 * SCSS stylesheets, compiled at load with dart-sass (the `sass` package, dart-sass compiled to
 * JavaScript), minified, and cached by content hash across loads of the same process.
 *
 * Why not `sass-embedded` (~3× faster on large stylesheets): it ships its compiler as one optional
 * package per platform, and `npm ci` refuses a lockfile that lacks any of them, which happens when
 * a registry mirror carries only some platforms. The pure-JS package installs everywhere.
 *
 * Imports are app paths (docs/assets.md "SCSS"): `@import "/dir/name"` reads `/dir/_name.scss`, then
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
 *
 * The compiler runs in a thread of its own (scss-thread.ts), started for the first stylesheet
 * that is in neither cache, and each stylesheet has a time bound (LW_ASSET_SCSS_TIME; docs/security.md,
 * "Bounds on building an app"): a `@while` that never ends cannot hold the load.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { DiagnosticList } from '../diag/index.js';
import { THREAD_MARK, type FromThread, type ThreadData, type ToThread } from './scss-thread.js';

export interface ScssSource {
  /** Reads an app file's text; undefined when it does not exist. */
  read(path: string): string | undefined;
}

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
    compilerIdentity = `sass ${version}; compressed; laneway importer 1; lenient 1`;
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

/**
 * The longest a stylesheet may take to compile, in milliseconds: $LANEWAY_SCSS_TIMEOUT_MS, else
 * 10 s (docs/security.md, "Bounds on building an app"). Loading the compiler is not counted.
 */
function timeLimitMs(): number {
  const given = Number(process.env.LANEWAY_SCSS_TIMEOUT_MS);
  return Number.isFinite(given) && given > 0 ? given : 10_000;
}

/** The longest wait for the thread to start and load the compiler. */
const START_LIMIT_MS = 60_000;

interface Thread {
  worker: Worker;
  port: MessagePort;
  flags: Int32Array;
}

/**
 * The compiling thread (scss-thread.ts), started on the first stylesheet that must be compiled and
 * kept for the next ones (a rebuild of `dev` does not load Sass again); never keeping the process
 * alive. A thread that ran out of time is ended, and the next compile starts a new one.
 */
let thread: Thread | undefined;

function startThread(): Thread {
  const { port1, port2 } = new MessageChannel();
  const flags = new Int32Array(new SharedArrayBuffer(8));
  // Named from this directory's sibling, so that the command's bundle (dist/bundle/) starts the
  // thread with its own small module (as src/supervisor/watchdog.ts).
  const self = new URL(`../assets/scss-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const data: ThreadData = { mark: THREAD_MARK, port: port2, flags: flags.buffer as SharedArrayBuffer };
  // A compile that runs out of memory ends the thread, not the process.
  // Run from the TypeScript sources (the tests, through tsx), the thread registers tsx first: Node 20
  // does not pass the loader given with --import on to worker threads.
  const code = self.pathname.endsWith('.ts')
    ? new URL(`data:text/javascript,import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(self.href)}); })`)
    : self;
  const worker = new Worker(code, { workerData: data, transferList: [port2], stdin: false, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
  worker.unref();
  // Its failures reach the loader as the end of its time (its error events wait for the event loop).
  worker.on('error', () => {});
  return { worker, port: port1, flags };
}

/** The thread's next message, or undefined when `deadline` (performance.now()) passes first. */
function nextMessage(t: Thread, deadline: number): FromThread | undefined {
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return undefined;
    Atomics.wait(t.flags, 0, 0, left);
    const received = receiveMessageOnPort(t.port);
    if (received) {
      Atomics.store(t.flags, 0, 0);
      return received.message as FromThread;
    }
  }
}

function answer(t: Thread, message: ToThread): void {
  t.port.postMessage(message);
  Atomics.store(t.flags, 1, 1);
  Atomics.notify(t.flags, 1);
}

/** Ends the thread (out of time, or it failed): the next compile starts another. */
function endThread(t: Thread): void {
  if (thread === t) thread = undefined;
  void t.worker.terminate();
}

type ThreadResult = Exclude<FromThread, { t: 'ready' } | { t: 'read' }> | { t: 'time'; ms: number };

/** Stylesheets this process gave the compiler (a stylesheet found in the caches is not counted). */
let compiles = 0;
export function sassCompiles(): number {
  return compiles;
}

/** Compiles one stylesheet in the thread, answering its reads, within the time bound. */
function compileInThread(path: string, text: string, read: (path: string) => string | undefined): ThreadResult {
  compiles++;
  let t = thread;
  if (t === undefined) {
    t = thread = startThread();
    const ready = nextMessage(t, performance.now() + START_LIMIT_MS);
    if (ready?.t !== 'ready') {
      endThread(t);
      return ready?.t === 'failed' ? ready : { t: 'failed', message: `the compiling thread did not start within ${START_LIMIT_MS / 1000} s` };
    }
  }
  const ms = timeLimitMs();
  const deadline = performance.now() + ms;
  t.port.postMessage({ t: 'job', path, text } satisfies ToThread);
  for (;;) {
    const message = nextMessage(t, deadline);
    if (message === undefined) {
      endThread(t);
      return { t: 'time', ms };
    }
    if (message.t === 'read') answer(t, { t: 'file', text: read(message.path) });
    else if (message.t !== 'ready') return message;
  }
}

/** Compiles the app's `.scss` files on demand. */
export class ScssCompiler {
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
    // Compiled in a thread of its own, within the time bound (scss-thread.ts).
    const result = compileInThread(path, text, (p) => this.source.read(p));
    if (result.t === 'done') {
      for (const w of result.lenient) {
        this.diagnostics.at('warning', 'LW_ASSET_SCSS_LENIENT', `Sass: ${w.message}${w.file !== path ? ` (imported by ${path})` : ''}`, w.file, { line: w.line, column: w.column });
      }
      // A stylesheet compiled with warnings is compiled again next time, so that they are reported again.
      if (result.lenient.length > 0) return result.css;
      const entry: Cached = { css: result.css, deps: [...result.read.map((p): [string, string] => [p, sha(this.source.read(p) ?? '')]), ...result.tried.map((p): [string, null] => [p, null])] };
      cache.set(key, entry);
      keep(key, entry);
      return result.css;
    }
    if (result.t === 'error') {
      this.diagnostics.at('error', 'LW_ASSET_SCSS', `Sass: ${result.message}${result.file !== path ? ` (imported by ${path})` : ''}`, result.file, { line: result.line, column: result.column });
    } else if (result.t === 'failed') {
      this.diagnostics.error('LW_ASSET_SCSS', `the Sass compiler could not start: ${result.message}`, path);
    } else {
      this.diagnostics.at(
        'error',
        'LW_ASSET_SCSS_TIME',
        `Sass: the stylesheet did not compile within ${result.ms / 1000} s (a @while or @for that runs too long, or a compile that ran out of memory); ` +
          `shorten its loops, or raise the bound with LANEWAY_SCSS_TIMEOUT_MS`,
        path,
        { line: 1, column: 1 },
      );
    }
    return undefined;
  }

  /** At the end of a load: the compiling thread stays for the next load (it never keeps the process alive). */
  dispose(): void {}
}
