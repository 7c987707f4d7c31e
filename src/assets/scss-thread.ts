/**
 * The thread that compiles SCSS (docs/security.md, "Bounds on building an app"). A stylesheet can
 * loop for ever (`@while true {}`) or for hours (`@for $i from 1 through 100000000`); compiled on
 * the loading thread, it would hold `check`, `serve` and every rebuild of `dev`. So the compiler
 * runs here, and the loader waits for it with a time bound (scss.ts), past which it ends the thread
 * and reports the stylesheet.
 *
 * The load is synchronous, so the two threads talk synchronously: a message on a MessagePort
 * (`receiveMessageOnPort`), and a flag in shared memory that each side sets, then waits on with
 * `Atomics.wait`. Flag 0: the thread has a message for the loader (a file to read, the result);
 * flag 1: the loader has answered. The thread reads every file through the loader (the app's
 * `SourceTree`: normalised names, links inside the app, the properties file as parsed), so it
 * reads nothing the loader would not.
 *
 * This module is the thread's code; scss.ts starts it as its own small file (not the command's
 * bundle), as src/supervisor/watchdog.ts does.
 */
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { isMainThread, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type * as Sass from 'sass';

export const THREAD_MARK = 'laneway-scss-thread';

/** What the loader sends: a stylesheet to compile, or the text of a file the thread asked for. */
export type ToThread = { t: 'job'; path: string; text: string } | { t: 'file'; text: string | undefined };

/** What the thread sends. `read`: the files the compile loaded; `tried`: names that did not exist. */
export type FromThread =
  | { t: 'ready' }
  | { t: 'read'; path: string }
  | { t: 'done'; css: string; read: string[]; tried: string[]; lenient: Lenient[] }
  | { t: 'error'; message: string; file: string; line: number; column: number }
  | { t: 'failed'; message: string };

/** A construct the platform's compiler accepted and dart-sass refuses, compiled without it (see `compileOne`). */
export interface Lenient {
  message: string;
  file: string;
  line: number;
  column: number;
}

export interface ThreadData {
  mark: typeof THREAD_MARK;
  port: MessagePort;
  flags: SharedArrayBuffer;
}

const SCHEME = 'laneway:';

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

/** The `/* … */` comments of a stylesheet, as [start, end) offsets (strings and `//` comments skipped). */
function loudComments(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out.push([i, stop]);
      i = stop;
    } else i++;
  }
  return out;
}

/** `text` with [from, to) turned into spaces, line breaks kept: every other position stays where it was. */
function blank(text: string, from: number, to: number): string {
  return text.slice(0, from) + text.slice(from, to).replace(/[^\n]/g, ' ') + text.slice(to);
}

/** Constructs the platform's compiler accepted, retried at most this many times per stylesheet. */
const LENIENT_MAX = 200;

/**
 * The platform's compiler was more lenient than dart-sass in two ways its apps depend on
 * (docs/assets.md "SCSS"): it did not evaluate `#{…}` inside a `/* … *\/` comment (dart-sass does,
 * and stops at an undefined variable there), and it let a declaration stand at the top level of a
 * media mixin's content (`@include tablet() { padding: 1rem }`), producing CSS no browser applies.
 * When the compile stops at one of those, the comment, or the declaration, is blanked in the text
 * handed to the compiler (positions kept) and the compile runs again; each one is reported as a
 * warning. Compressed output drops ordinary comments, so the CSS is what the platform served.
 */
function lenientFix(message: string, text: string, start: number, end: number): { text: string; what: string } | undefined {
  const comment = loudComments(text).find(([from, to]) => start >= from && start < to);
  if (comment) return { text: blank(text, comment[0], comment[1]), what: `interpolation inside a /* */ comment is not evaluated (${message.replace(/\.$/, '')}); the comment is left out` };
  if (message.startsWith('Declarations may only be used within style rules')) {
    let to = end;
    while (to < text.length && /[ \t]/.test(text[to]!)) to++;
    if (text[to] === ';') to++;
    return { text: blank(text, start, to), what: `the declaration "${text.slice(start, end).replace(/\s+/g, ' ')}" stands outside any style rule (at the top level of a mixin's content, for instance); it is left out, as the platform's compiler gave it to no element` };
  }
  return undefined;
}

/** Compiles one stylesheet; `read` answers an app file's text (undefined: it does not exist). */
function compileOne(sass: typeof Sass, path: string, text: string, read: (path: string) => string | undefined): FromThread {
  const texts = new Map<string, string | undefined>();
  // Texts as handed to the compiler, after lenient fixes (the entry's under its own path).
  const patched = new Map<string, string>();
  const source = (p: string) => {
    if (patched.has(p)) return patched.get(p);
    if (!texts.has(p)) texts.set(p, read(p));
    return texts.get(p);
  };
  const lenient: Lenient[] = [];
  for (let attempt = 0; ; attempt++) {
    const loaded = new Set<string>();
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
          if (source(c) !== undefined) return new URL(SCHEME + encodeURI(c));
          tried.add(c);
        }
        return null;
      },
      load: (url) => {
        const p = pathOf(url);
        const contents = source(p);
        if (contents === undefined) return null;
        loaded.add(p);
        return { contents, syntax: p.endsWith('.css') ? 'css' : 'scss' };
      },
    };
    try {
      const result = sass.compileString(patched.get(path) ?? text, {
        url: new URL(SCHEME + encodeURI(path)),
        syntax: 'scss',
        style: 'compressed',
        importers: [importer],
        logger: { warn() {}, debug() {} },
        charset: false,
      });
      return { t: 'done', css: result.css, read: [...loaded], tried: [...tried], lenient };
    } catch (err) {
      const e = err as Sass.Exception;
      const span = e.span as Sass.SourceSpan | undefined;
      const file = span?.url?.protocol === SCHEME ? pathOf(span.url) : path;
      const message = (e.sassMessage ?? (err as Error).message).split('\n')[0]!;
      const line = span ? span.start.line + 1 : 1;
      const column = span ? span.start.column + 1 : 1;
      const current = file === path ? (patched.get(path) ?? text) : source(file);
      const fix = span && current !== undefined && attempt < LENIENT_MAX ? lenientFix(message, current, span.start.offset, span.end.offset) : undefined;
      if (fix === undefined) return { t: 'error', message, file, line, column };
      patched.set(file, fix.text);
      lenient.push({ message: fix.what, file, line, column });
    }
  }
}

/** The thread: loads Sass, says it is ready, then compiles each job it is sent. */
function runThread(data: ThreadData): void {
  const flags = new Int32Array(data.flags);
  const port = data.port;
  const say = (message: FromThread) => {
    port.postMessage(message);
    Atomics.store(flags, 0, 1);
    Atomics.notify(flags, 0);
  };
  const read = (path: string): string | undefined => {
    say({ t: 'read', path });
    for (;;) {
      Atomics.wait(flags, 1, 0);
      const answer = receiveMessageOnPort(port)?.message as ToThread | undefined;
      if (answer?.t !== 'file') continue;
      Atomics.store(flags, 1, 0);
      return answer.text;
    }
  };
  let sass: typeof Sass;
  try {
    sass = createRequire(import.meta.url)('sass') as typeof Sass;
  } catch (err) {
    say({ t: 'failed', message: (err as Error).message });
    return;
  }
  port.on('message', (job: ToThread) => {
    if (job.t === 'job') say(compileOne(sass, job.path, job.text, read));
  });
  say({ t: 'ready' });
}

if (!isMainThread && (workerData as { mark?: unknown } | null)?.mark === THREAD_MARK) {
  runThread(workerData as ThreadData);
}
