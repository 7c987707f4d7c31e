/**
 * The development server of `laneway dev`: live reload and the error overlay, on top of the
 * ordinary server (`createServer` with `devHooks`), and the file watcher that `dev` and
 * `serve --watch` share.
 *
 * The command line creates the tools before the first load, passes `hooks` to `createServer`
 * and `captureLog(…)` as the app's `log`, and tells them about every rebuild: `built(changed)`
 * (pages reload, or swap their stylesheets) or `failed(diagnostics)` (every page answers the
 * problems, and open pages reload to show them).
 *
 * Files: watcher.ts (chokidar, bursts), reload.ts (the event stream and the client script), requests.ts
 * (the request panel: the last requests and what they logged),
 * overlay.ts (the problems page), docs.ts (the error codes' documentation, served locally).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, relative, resolve, sep } from 'node:path';
import { loadApp, type App, type AppOptions, type Reply } from '../app/index.js';
import type { Diagnostic } from '../diag/index.js';
import { prefersJson, type ServerOptions } from '../http/index.js';
import { docsPage, DOCS_PATH } from './docs.js';
import { buildProblemsPage, OVERLAY_POLICY, runtimeErrorPage, type Problem } from './overlay.js';
import { EVENTS_PATH, injectClient, ReloadChannel, withClientSources } from './reload.js';
import { RequestLog, REQUESTS_PATH } from './requests.js';
import { appRelative } from './watcher.js';

export { watchAppFiles, type AppWatcher, type WatchOptions } from './watcher.js';

/** What `createServer` takes as `devHooks`. */
export type DevHooks = NonNullable<ServerOptions['devHooks']>;

/** Where run-time problems of scripts and views are logged (`AppOptions.log`). */
export type AppLog = NonNullable<AppOptions['log']>;

export interface DevTools {
  /** For `createServer(app, { devHooks })`. */
  readonly hooks: DevHooks;
  /** Whether the last build failed (every page answers its problems). */
  readonly broken: boolean;
  /**
   * The app's `log` (`loadApp(dir, { log })`): each run-time error is kept for the overlay of the
   * request that had it, then passed to `next` (default: standard error, as without dev).
   */
  captureLog(next?: AppLog): AppLog;
  /** A build succeeded and serves from now on; `changed`: the absolute paths of the burst. */
  built(changed: readonly string[]): void;
  /** A build failed: pages answer its problems until the next success. */
  failed(diagnostics: readonly Diagnostic[], changed?: readonly string[]): void;
  /** An app to give `createServer` when the first build failed (an empty one; the overlay answers). */
  placeholderApp(): App;
  /** Ends the open event streams (the server stops). */
  close(): void;
}

/** Run-time errors kept per request id, for this many requests at most (the oldest go first). */
const KEPT_REQUESTS = 200;

const HTML = 'text/html; charset=utf-8';
const POLICY_HEADERS = ['Content-Security-Policy', 'Content-Security-Policy-Report-Only'];

/** `root`: the app directory (for code frames and the paths in reload events). */
export function createDevTools(options: { root: string }): DevTools {
  const root = resolve(options.root);
  const instance = randomBytes(4).toString('hex');
  let buildNumber = 0;
  const build = () => `${instance}:${buildNumber}`;
  let problems: readonly Diagnostic[] | undefined;
  const channel = new ReloadChannel();
  const logged = new Map<string, Array<{ message: string; fields: Record<string, unknown> }>>();
  // The request panel's list (requests.ts): every answer of the app, with what it logged.
  const requests = new RequestLog();

  const defaultLog: AppLog = (message, fields) => process.stderr.write(`error: ${message} ${JSON.stringify(fields)}\n`);

  const send = (req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string>): number => {
    const bytes = Buffer.from(body);
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': bytes.length, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...headers });
    res.end(req.method === 'HEAD' ? undefined : bytes);
    return status;
  };

  /** Step 0 of the request function: /__/dev/…, then the problems while the app does not compile. */
  const intercept = (req: IncomingMessage, res: ServerResponse, id: string): number | Promise<number> | undefined => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const read = req.method === 'GET' || req.method === 'HEAD';
    // The data browser is the app's own (app/request/data-browser.ts, development mode only).
    if (path.startsWith('/__/dev/') && !path.startsWith('/__/dev/data/')) {
      if (read && path === EVENTS_PATH) return channel.open(req, res, build());
      if (read && path === REQUESTS_PATH) return send(req, res, 200, 'application/json; charset=utf-8', requests.json(), { 'X-Request-Id': id });
      const doc = read && path.startsWith(DOCS_PATH) ? docsPage(path.slice(DOCS_PATH.length)) : undefined;
      if (doc) return send(req, res, 200, HTML, doc.html, { 'Content-Security-Policy': doc.policy, 'X-Request-Id': id });
      return send(req, res, 404, 'text/plain; charset=utf-8', 'laneway dev: nothing here\n', { 'X-Request-Id': id });
    }
    if (problems === undefined) return undefined;
    if (prefersJson(req.headers.accept)) {
      const body = JSON.stringify({ error: 'The app does not compile.', id, problems: problems.map(({ code, severity, message, file, line, column }) => ({ code, severity, message, file, line, column })) });
      return send(req, res, 500, 'application/json; charset=utf-8', body, { 'X-Request-Id': id });
    }
    return send(req, res, 500, HTML, buildProblemsPage(problems, root, build()), { 'Content-Security-Policy': OVERLAY_POLICY, 'X-Request-Id': id });
  };

  /** The problems of a failed request: what its scripts and views logged, what was thrown, the detail. */
  const runtimeProblems = (reply: Extract<Reply, { type: 'error' }>, id: string, error: unknown): Problem[] => {
    const out: Problem[] = [];
    for (const { message, fields } of logged.get(id) ?? []) out.push(loggedProblem(message, fields, reply.code));
    logged.delete(id);
    if (error !== undefined) out.push(thrownProblem(error, reply.code));
    if (out.length === 0) out.push({ code: reply.code, severity: 'error', message: reply.message, ...(reply.detail === undefined ? {} : { detail: reply.detail }) });
    return out;
  };

  /** Every answer goes to the request panel with what it logged (the overlay of a failure takes the lines too). */
  const decorate: DevHooks['decorate'] = (reply, request, context) => {
    const status = reply.type === 'asset' ? (reply.status ?? 200) : reply.type === 'stored' ? 200 : reply.status;
    channel.send('request', requests.record(request, status, logged.get(request.id)));
    if (!(reply.type === 'error' && reply.status >= 500 && !request.acceptsJson)) logged.delete(request.id);
    return decorateReply(reply, request, context);
  };

  const decorateReply: DevHooks['decorate'] = (reply, request, { root: appRoot, error }) => {
    if (reply.type === 'error') {
      if (reply.status < 500) return reply;
      if (request.acceptsJson) {
        logged.delete(request.id);
        return reply;
      }
      const problems = runtimeProblems(reply, request.id, error);
      // Named after where it failed: a view's tag (whatever it called), else a script.
      const file = problems.find((p) => p.file !== undefined)?.file ?? '';
      const title = file.endsWith('.html') || reply.code.startsWith('LW_VIEW_') ? 'A view failed' : file.endsWith('.js') || reply.code.startsWith('LW_SCRIPT_') ? 'A script failed' : 'The request failed';
      // Positions are in the files of the app that answered (a nested site's own).
      const body = runtimeErrorPage({ status: reply.status, title, method: request.method, path: request.path, id: request.id, problems, root: appRoot, build: build() });
      return { type: 'body', status: reply.status, contentType: HTML, body, headers: { 'Content-Security-Policy': OVERLAY_POLICY, 'Cache-Control': 'no-store', 'X-Request-Id': request.id } };
    }
    // Pages the browser shows as a document: not fetch() and the like, which say where their answer goes.
    const dest = request.headers['sec-fetch-dest'];
    if (dest !== undefined && dest !== 'document' && dest !== 'iframe' && dest !== 'frame') return reply;
    if (reply.type === 'body') {
      if (!reply.contentType.startsWith('text/html') || reply.body.length === 0) return reply;
      // An ETag computed before (a cached page) named the body without the client: computed again.
      const etag = typeof reply.etag === 'string' ? true : reply.etag;
      return { ...reply, body: injectClient(String(reply.body), build()), headers: policiesWithClient(reply.headers), ...(etag === undefined ? {} : { etag }) };
    }
    if (reply.type === 'asset' && reply.asset.type.startsWith('text/html') && reply.asset.body !== undefined && reply.asset.body.length > 0) {
      const status = reply.status ?? 200;
      const headers = { 'Cache-Control': reply.asset.cacheControl, ...policiesWithClient(reply.headers) };
      return { type: 'body', status, contentType: reply.asset.type, body: injectClient(reply.asset.body.toString('utf8'), build()), headers, etag: status === 200 };
    }
    return reply;
  };

  /** Reload events carry the changed files relative to the app. */
  const files = (changed: readonly string[]) => changed.map((p) => appRelative(root, p));

  return {
    hooks: { intercept, decorate },
    get broken() {
      return problems !== undefined;
    },
    captureLog(next = defaultLog) {
      return (message, fields) => {
        const id = fields.id;
        if (typeof id === 'string') {
          let list = logged.get(id);
          if (!list) {
            logged.set(id, (list = []));
            if (logged.size > KEPT_REQUESTS) logged.delete(logged.keys().next().value!);
          }
          list.push({ message, fields });
        }
        next(message, fields);
      };
    },
    built(changed) {
      buildNumber++;
      const wasBroken = problems !== undefined;
      problems = undefined;
      const urls = wasBroken ? undefined : stylesheetUrls(root, changed);
      if (urls) channel.send('css', { build: build(), files: files(changed), urls });
      else channel.send('reload', { build: build(), files: files(changed) });
    },
    failed(diagnostics, changed = []) {
      buildNumber++;
      problems = diagnostics;
      channel.send('reload', { build: build(), files: files(changed) });
    },
    placeholderApp() {
      const empty = mkdtempSync(join(tmpdir(), 'laneway-dev-'));
      try {
        return loadApp(empty, { dev: true });
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    },
    close() {
      channel.close();
    },
  };
}

/** The reply's policy headers with the client's sources added. */
function policiesWithClient(headers: Record<string, string | string[]> | undefined): Record<string, string | string[]> | undefined {
  if (headers === undefined) return undefined;
  const out = { ...headers };
  for (const name of POLICY_HEADERS) {
    const value = out[name];
    if (typeof value === 'string') out[name] = withClientSources(value);
  }
  return out;
}

/**
 * The URLs of the changed files when every one is a public stylesheet of the app that still exists
 * (`/css/site.css`, `/theme.scss`, `/📌print.css` served as `/print.css`); otherwise undefined, and
 * pages reload. A private partial (`_vars.scss`) may be imported by any stylesheet or inlined into
 * a page, so it reloads the pages; so do the properties (/🎨.scss), whose texts views print.
 */
function stylesheetUrls(root: string, changed: readonly string[]): string[] | undefined {
  if (changed.length === 0) return undefined;
  const urls: string[] = [];
  for (const abs of changed) {
    const rel = relative(root, abs);
    if (rel === '' || rel.startsWith('..') || !['.css', '.scss'].includes(extname(abs)) || !existsSync(abs)) return undefined;
    const segments = rel.split(sep).map((s) => s.normalize('NFC'));
    if (segments.some((s) => s.startsWith('_') || s.startsWith('.'))) return undefined;
    // The properties (/🎨.scss) are texts and switches views print too, and never served: pages reload.
    if (segments.length === 1 && segments[0]!.replace(/\uFE0F/g, '') === '🎨.scss') return undefined;
    const last = segments.length - 1;
    segments[last] = segments[last]!.replace(/^📌/u, '');
    urls.push('/' + segments.join('/'));
  }
  return urls;
}

/** A logged run-time error as a problem: a view's position (fields), or a script's (its message). */
function loggedProblem(message: string, fields: Record<string, unknown>, replyCode: string): Problem {
  // What a script wrote with console.… before it failed (docs/scripting.md "Logging"): shown, not an error.
  if (typeof fields.console === 'string') {
    const at = typeof fields.file === 'string' && typeof fields.line === 'number' ? { file: fields.file, line: fields.line, ...(typeof fields.column === 'number' && { column: fields.column }) } : {};
    return { severity: 'warning', message: message.replace(/^\/[^\n]*?:\d+:\d+: /, ''), ...at };
  }
  const code = typeof fields.code === 'string' ? fields.code : replyCode;
  if (typeof fields.file === 'string' && typeof fields.line === 'number' && typeof fields.column === 'number') {
    return { code, severity: 'error', message: typeof fields.error === 'string' ? fields.error : message, file: fields.file, line: fields.line, column: fields.column };
  }
  // Script errors name their position first: `/api/GET.js:3:7: TypeError: …`.
  const at = /^(\/[^\n]*?):(\d+):(\d+): ([\s\S]*)$/.exec(message);
  if (at) return { code, severity: 'error', message: at[4]!, file: at[1]!, line: Number(at[2]), column: Number(at[3]) };
  const inFile = /^(\/[^\n:]*): ([\s\S]*)$/.exec(message);
  if (inFile) return { code, severity: 'error', message: inFile[2]!, file: inFile[1]! };
  return { code, severity: 'error', message, ...(typeof fields.file === 'string' ? { file: fields.file } : {}) };
}

/** What an unexpected error threw: its message, its position when it has one, its stack. */
function thrownProblem(error: unknown, replyCode: string): Problem {
  const e = error as { message?: unknown; code?: unknown; file?: unknown; line?: unknown; column?: unknown; stack?: unknown } | null;
  const problem: Problem = { code: typeof e?.code === 'string' && e.code.startsWith('LW_') ? e.code : replyCode, severity: 'error', message: String(e?.message ?? error) };
  if (typeof e?.file === 'string') problem.file = e.file;
  if (typeof e?.line === 'number') problem.line = e.line;
  if (typeof e?.column === 'number') problem.column = e.column;
  if (typeof e?.stack === 'string') problem.detail = e.stack;
  return problem;
}


