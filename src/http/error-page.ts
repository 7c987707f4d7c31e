/**
 * Built-in error answers: a small HTML page, or `{ "error": … }` when the client prefers JSON
 * (`writeError`). The answers and their messages are made in app/endpoint/answers.ts: fixed texts chosen by
 * Laneway, never echoes of the request. In development mode a failed render adds its details
 * (file:line:column, message, code frame) below the message. Every error answer carries the
 * request's id in `X-Request-Id` (see `withRequestId`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answers, type FailureSite, type Reply } from '../app/index.js';
import type { Code } from '../diag/index.js';
import { sendBody } from './send.js';

export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `detail`: development details, shown as preformatted text. */
export function errorHtml(status: number, message: string, detail?: string): string {
  const title = `${status} ${STATUS_TEXT[status] ?? 'Error'}`;
  const more = detail === undefined ? '' : `\n<pre>${escapeHtml(detail)}</pre>`;
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n<body><h1>${title}</h1><p>${escapeHtml(message)}</p>${more}</body></html>\n`;
}

/**
 * Writes an error answer as the client accepts it (`prefersJson`): `{ "error": message, "id": … }`
 * (in development, `dev`, also the code, where it failed and `detail`; answers.ts `errorJson`),
 * or the HTML page, whose policy send.ts adds. `headers` must hold `X-Request-Id`, whose value
 * the JSON body names. `loggedAs`: the request id of a log line; a server error's page names it
 * when its message does not already.
 */
export function writeError(
  req: IncomingMessage,
  res: ServerResponse,
  error: { status: number; code?: Code; message: string; detail?: string; site?: FailureSite },
  headers: Record<string, string | string[]>,
  loggedAs?: string,
  dev = false,
): number {
  const { status, message, detail } = error;
  if (prefersJson(req.headers.accept)) {
    const id = headers['X-Request-Id'];
    const details = dev && error.code !== undefined ? { code: error.code, site: error.site, detail } : undefined;
    return sendBody(req, res, status, 'application/json; charset=utf-8', answers.errorJson(message, typeof id === 'string' ? id : undefined, details), { headers });
  }
  const shown = loggedAs !== undefined && status >= 500 && !message.includes(loggedAs) ? `${message} The error was logged with id ${loggedAs}.` : message;
  return sendBody(req, res, status, 'text/html; charset=utf-8', status < 500 && detail === undefined ? pageOf(status, shown) : errorHtml(status, shown, detail), { headers });
}

/** The built-in pages of client errors, by status and message (fixed texts: a few dozen at most). */
const pages = new Map<string, Buffer>();

function pageOf(status: number, message: string): Buffer {
  const key = `${status} ${message}`;
  let page = pages.get(key);
  if (page === undefined) {
    if (pages.size >= 256) pages.clear();
    pages.set(key, (page = Buffer.from(errorHtml(status, message))));
  }
  return page;
}

/**
 * An error answer made by the app (a script's 4xx JSON, a ⚡NotFound.html page) with
 * `X-Request-Id` added; other replies as they are. Replies of type 'error' get it in sendError.
 */
export function withRequestId(reply: Reply, id: string): Reply {
  if (reply.type === 'error' || reply.type === 'redirect' || reply.type === 'stored' || (reply.status ?? 200) < 400) return reply;
  return { ...reply, headers: { ...reply.headers, 'X-Request-Id': id } };
}

/** Whether the Accept header ranks JSON above HTML. */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept || !accept.includes('json')) return false;
  let json = 0;
  let html = 0;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) || 0 : 1;
    if (type === 'application/json' || type.endsWith('+json')) json = Math.max(json, q);
    else if (type === 'text/html') html = Math.max(html, q);
  }
  return json > 0 && json > html;
}
