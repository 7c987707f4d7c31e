/**
 * The error overlay of `laneway dev`: the HTML page every request gets while the app does not
 * compile (its problems), and the page a request gets when a script or a view fails at run time
 * (the script or view position and the request id). Each problem shows its file, line and column,
 * the message, a code frame, and a link to the code's entry in the documentation.
 *
 * The page carries the live-reload client (reload.ts), so it replaces itself once a change fixes
 * the problem, and a strict policy of its own: only its style and the client, by hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { codeFrame, type Diagnostic } from '../diag/index.js';
import { CLIENT_HASH, clientElement } from './reload.js';
import { DOCS_PATH } from './docs.js';

/** One problem as the overlay shows it. */
export interface Problem {
  code?: string;
  severity: 'error' | 'warning';
  message: string;
  /** App-relative (`/index.html`), or relative to the app directory (`../laneway.sources.yaml`). */
  file?: string;
  line?: number;
  column?: number;
  /** Preformatted text shown below the message when there is no frame (a stack, a render detail). */
  detail?: string;
}

const STYLE = `
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: #1d1d1f; background: #fff5f5; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.4rem; color: #b00020; margin: 0 0 .25rem; }
.lead { margin: 0 0 1.25rem; color: #444; }
.problem { background: #fff; border: 1px solid #f0c0c0; border-left: 4px solid #b00020; border-radius: 4px; padding: .75rem 1rem; margin: 0 0 1rem; }
.problem.warning { border-left-color: #b36b00; border-color: #f0dcc0; }
.where { font: 600 14px ui-monospace, SFMono-Regular, Menlo, monospace; margin: 0; }
.message { margin: .35rem 0; white-space: pre-wrap; }
.code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #1d1d1f; color: #f5f5f7; padding: .75rem; border-radius: 4px; overflow-x: auto; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; margin: .5rem 0 0; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
footer { color: #666; font-size: 13px; }
`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/** The overlay's own policy: its style and the client, by hash; the event stream; nothing else. */
export const OVERLAY_POLICY = `default-src 'none'; script-src ${CLIENT_HASH}; style-src ${STYLE_HASH}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The anchor of a code's entry in docs/errors.md (`### LW_APP_YAML` → `lw_app_yaml`). */
export function docsLink(code: string): string {
  return `${DOCS_PATH}errors.md#${code.toLowerCase()}`;
}

/** Source files larger than this get no code frame (a minified bundle is no help). */
const FRAME_FILE_LIMIT = 1024 * 1024;

/** The code frame of a position in a file of the app, when the file can be read. */
function frameOf(root: string, file: string, line: number, column: number): string | undefined {
  // App-relative (`/index.html`), relative to the app (`../laneway.sources.yaml`), or, for a
  // nested site outside the app, absolute (`/home/me/shop/GET.js`).
  const candidates = file.startsWith('/') ? [join(root, file), file] : [resolve(root, file)];
  for (const abs of candidates) {
    try {
      const info = statSync(abs);
      if (!info.isFile()) continue;
      if (info.size > FRAME_FILE_LIMIT) return undefined;
      return codeFrame(readFileSync(abs, 'utf8'), line, column);
    } catch {
      // a file since deleted, a name the loader normalised: the next candidate, or no frame
    }
  }
  return undefined;
}

function problemHtml(p: Problem, root: string): string {
  const file = p.file === undefined ? undefined : p.file.startsWith('/') ? p.file.slice(1) : p.file;
  const where = file === undefined ? '' : p.line === undefined ? file : `${file}:${p.line}:${p.column ?? 1}`;
  const frame = p.file !== undefined && p.line !== undefined ? frameOf(root, p.file, p.line, p.column ?? 1) : undefined;
  const code = p.code === undefined ? '' : ` <a class="code" href="${docsLink(p.code)}">${p.code}</a>`;
  const tag = p.severity === 'warning' ? 'warning: ' : '';
  return (
    `<section class="problem ${p.severity}">` +
    `<p class="where">${escapeHtml(where)}${code}</p>` +
    `<p class="message">${escapeHtml(tag + p.message)}</p>` +
    (frame !== undefined ? `<pre>${escapeHtml(frame)}</pre>` : p.detail !== undefined ? `<pre>${escapeHtml(p.detail)}</pre>` : '') +
    `</section>`
  );
}

function page(title: string, lead: string, problems: readonly Problem[], root: string, build: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>\n` +
    `<body><main id="laneway-overlay">\n<h1>${escapeHtml(title)}</h1>\n<p class="lead">${lead}</p>\n` +
    problems.map((p) => problemHtml(p, root)).join('\n') +
    `\n<footer>laneway dev: this page reloads by itself when a file of the app changes.</footer>\n</main>` +
    clientElement(build) +
    `</body></html>\n`
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The page of an app that does not compile: every error, then the warnings. */
export function buildProblemsPage(diagnostics: readonly Diagnostic[], root: string, build: string): string {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const warnings = diagnostics.filter((d) => d.severity !== 'error');
  const lead = `${plural(errors.length, 'error')}, ${plural(warnings.length, 'warning')}. Fix them and this page shows the app again.`;
  return page('The app does not compile', escapeHtml(lead), [...errors, ...warnings].map(problemOf), root, build);
}

/** A diagnostic as a problem. */
export function problemOf(d: Diagnostic): Problem {
  return { code: d.code, severity: d.severity, message: d.message, file: d.file, line: d.line, column: d.column };
}

/** The page of a request that failed at run time. */
export function runtimeErrorPage(options: { status: number; title: string; method: string; path: string; id: string; problems: readonly Problem[]; root: string; build: string }): string {
  const { status, title, method, path, id } = options;
  const lead = `${escapeHtml(method)} ${escapeHtml(path)} failed with ${status}. Request id: <span class="id">${escapeHtml(id)}</span> (the log has the same id).`;
  return page(title, lead, options.problems, options.root, options.build);
}
