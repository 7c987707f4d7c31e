/**
 * A served app that also reports what happened inside: which endpoints ran, which read their
 * body, and the access log. Tests use it to prove a refused request never reached a script.
 */
import { rmSync } from 'node:fs';
import { loadApp, type Endpoint } from '../../src/app/index.js';
import { createServer, type Logger } from '../../src/http/index.js';
import { rawRequest, writeApp, type AppFiles, type Response } from '../helpers.js';

export interface AccessEntry {
  id: string;
  method: string;
  path: string;
  status: number;
}

export interface SpiedServer {
  port: number;
  url: string;
  /** `METHOD /path` of every endpoint run, in order. */
  runs: string[];
  /** `METHOD /path` of every endpoint run that read the request body. */
  bodyReads: string[];
  access: AccessEntry[];
  /** Every request as it arrived: method, target and the headers the cross-site rule reads. */
  seen: Array<{ method: string; url: string; secFetchSite?: string; origin?: string }>;
  request(method: string, path: string, headers?: Record<string, string>, body?: string | Buffer): Promise<Response>;
  close(): Promise<void>;
}

export async function serveSpied(files: AppFiles, host = '127.0.0.1'): Promise<SpiedServer> {
  const dir = writeApp(files);
  const app = loadApp(dir);
  const runs: string[] = [];
  const bodyReads: string[] = [];
  const access: AccessEntry[] = [];
  const match = app.router.match.bind(app.router);
  app.router.match = (method, path) => {
    const found = match(method, path);
    if (found.kind !== 'found') return found;
    const endpoint: Endpoint = {
      ...found.value,
      handle(info) {
        const what = `${info.method} ${info.path}`;
        runs.push(what);
        const readBody = info.readBody;
        return found.value.handle({ ...info, readBody: () => (bodyReads.push(what), readBody()) });
      },
    };
    return { ...found, value: endpoint };
  };
  const logger: Logger = {
    format: 'json',
    access: (e) => access.push({ id: e.id, method: e.method, path: e.path, status: e.status }),
    error: () => {},
    info: () => {},
  };
  const server = createServer(app, { log: logger });
  const seen: SpiedServer['seen'] = [];
  server.server.prependListener('request', (req) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', secFetchSite: req.headers['sec-fetch-site'], origin: req.headers.origin });
  });
  const { port } = await server.listen(0, host);
  return {
    port,
    url: `http://${host}:${port}`,
    runs,
    bodyReads,
    access,
    seen,
    request: (method, path, headers, body) => rawRequest(port, method, path, headers, body),
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
