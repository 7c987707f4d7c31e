/**
 * `inject`: a request to an app without a socket, for tests (docs/architecture.md "Testing"). It
 * goes through the same `dispatch` and `send` as a request off the network; the response is
 * collected in memory. Development hooks and the access log are not involved.
 */
import { IncomingMessage, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { answers, type App } from '../app/index.js';
import { LanewayError } from '../diag/index.js';
import { dispatch } from './dispatch.js';
import { writeError } from './error-page.js';
import { nextRequestId, send } from './handler.js';

export interface InjectRequest {
  method?: string;
  /** The target: path and query (`/a?b=1`). */
  url: string;
  headers?: IncomingHttpHeaders;
  body?: string | Buffer;
}

export interface InjectResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[]>;
  body: Buffer;
  text(): string;
}

/** Answers `request` as the app would over HTTP. Event streams are sent until they end. */
export async function inject(app: App, request: InjectRequest): Promise<InjectResponse> {
  const method = (request.method ?? 'GET').toUpperCase();
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const headers: IncomingHttpHeaders = { host: 'localhost', ...lowerCased(request.headers ?? {}) };
  if (request.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(body.length);
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = request.url;
  req.headers = headers;
  const res = new Collector();
  const id = nextRequestId();
  let status: number;
  try {
    const d = dispatch(app, {
      id,
      method,
      url: request.url,
      headers,
      readBody: async (limit) => {
        if (body.length > limit) throw answers.bodyTooLarge(limit);
        return body;
      },
      // In pieces of 64 KiB, as a connection would give them.
      async *bodyStream() {
        for (let at = 0; at < body.length; at += 65_536) yield body.subarray(at, at + 65_536);
      },
      onClose: (listener) => res.once('close', listener),
    });
    status = await send(req, res as unknown as ServerResponse, await d.reply, id, { events: d.app.settings.events, dev: d.app.options.dev === true });
  } catch (err) {
    // As the request function answers what was thrown (handler.ts `fail`), without development's overlay.
    const code = err instanceof LanewayError ? err.code : 'LW_HTTP_INTERNAL';
    status = err instanceof LanewayError ? err.status : 500;
    const error = err instanceof LanewayError && err.expose ? { status, message: err.message } : { ...answers.internalError(id, code), status };
    writeError(req, res as unknown as ServerResponse, error, { 'X-Request-Id': id }, id);
  }
  await res.finished;
  const bytes = Buffer.concat(res.chunks);
  return { status: res.statusCode || status, headers: res.headers, body: bytes, text: () => bytes.toString('utf8') };
}

function lowerCased(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The part of a ServerResponse that send.ts uses, writing into memory. */
class Collector extends Writable {
  statusCode = 0;
  headers: Record<string, string | string[]> = {};
  headersSent = false;
  readonly chunks: Buffer[] = [];
  readonly finished = new Promise<void>((resolve) => this.once('finish', resolve).once('close', resolve));

  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) this.headers[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
    this.headersSent = true;
    return this;
  }

  setHeader(name: string, value: string | string[] | number): this {
    this.headers[name.toLowerCase()] = Array.isArray(value) ? value : String(value);
    return this;
  }

  getHeader(name: string): string | string[] | undefined {
    return this.headers[name.toLowerCase()];
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    callback();
  }
}
