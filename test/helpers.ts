/**
 * Test helpers: write an app into a temporary directory, serve it on 127.0.0.1 port 0, and send
 * raw HTTP requests (node:http sends the path exactly as given; fetch would normalise it).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, symlinkSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkApp, closeAppData, loadApp, openAppData, type AppOptions } from '../src/app/index.js';
import { formatDiagnostic } from '../src/diag/index.js';
import type { DataOptions } from '../src/app/services/data.js';
import { createServer, TrustedProxies } from '../src/http/index.js';

/** Files by app path (`/a/b.html`); a value `{ symlink: target }` makes a symbolic link. */
export type AppFiles = Record<string, string | Buffer | { symlink: string }>;

export function writeApp(files: AppFiles, root = mkdtempSync(join(tmpdir(), 'laneway-app-'))): string {
  for (const [path, content] of Object.entries(files)) {
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof content === 'object' && !Buffer.isBuffer(content)) symlinkSync(content.symlink, abs);
    else writeFileSync(abs, content);
  }
  return root;
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface Served {
  dir: string;
  port: number;
  url: string;
  request(method: string, path: string, headers?: Record<string, string>, body?: string | Buffer): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** `bodyDelayMs`: the headers go out at once and the body that much later (a slow client). */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer, bodyDelayMs?: number): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text: buf.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    // A hung request fails its test instead of hanging the run.
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s: ${method} ${path}`)));
    if (bodyDelayMs === undefined) req.end(body);
    else {
      req.flushHeaders();
      setTimeout(() => req.end(body), bodyDelayMs);
    }
  });
}

/**
 * Loads the app in `dir` (or writes `files` first) and serves it on 127.0.0.1, port 0.
 * `trustProxy`: the text of `--trust-proxy`.
 */
export async function serve(files: AppFiles | string, options: AppOptions & { data?: DataOptions; trustProxy?: string } = {}): Promise<Served> {
  const dir = typeof files === 'string' ? files : writeApp(files);
  const app = loadApp(dir, options);
  await openAppData(app, options.data);
  const trust = options.trustProxy === undefined ? undefined : TrustedProxies.parse(options.trustProxy);
  if (trust && 'error' in trust) throw new Error(trust.error);
  const server = createServer(app, { log: 'off', ...(trust && { trustProxy: trust }) });
  const { port, url } = await server.listen(0, '127.0.0.1');
  return {
    dir,
    port,
    url,
    request: (method, path, headers, body) => rawRequest(port, method, path, headers, body),
    get: (path, headers) => rawRequest(port, 'GET', path, headers),
    async close() {
      await server.close();
      await closeAppData(app);
      if (typeof files !== 'string') rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every diagnostic of an app written from `files`, formatted; only codes starting with `prefix`. */
export function diagnosticsOf(files: AppFiles, prefix = 'LW_'): string[] {
  const dir = writeApp(files);
  try {
    return checkApp(dir)
      .filter((d) => d.code.startsWith(prefix))
      .map(formatDiagnostic);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A JSON answer's body; an error answer's `id` (docs/errors.md "Error answers") is checked against
 * its `X-Request-Id` and left out, so tests compare what the answer says.
 */
export function jsonWithoutId(r: { status: number; headers: IncomingHttpHeaders; body?: Buffer; text?: string }): any {
  const value: unknown = JSON.parse(r.text ?? r.body!.toString('utf8'));
  if (r.status >= 400 && value !== null && typeof value === 'object' && 'id' in value) {
    const { id, ...rest } = value as Record<string, unknown>;
    if (id !== r.headers['x-request-id']) throw new Error(`the body's id ${String(id)} is not the X-Request-Id ${String(r.headers['x-request-id'])}`);
    return rest;
  }
  return value;
}
