/**
 * The platform's own answers under the reserved `/__/` prefix, for load balancers, orchestrators
 * and Prometheus (docs/deploy.md). An app cannot route there: a directory named `__` is private
 * (its name starts with `_`), so these paths never collide with an app's.
 *
 *   GET /__/health    liveness: 200 {"status":"ok"} while the process runs
 *   GET /__/ready     readiness: 200 {"status":"ready"} when the app is loaded and each of its
 *                     stores answers a trivial query; 503 {"status":"unavailable","reason":…}
 *                     otherwise (a database that is down, or the server stopping)
 *   GET /__/metrics   the Prometheus exposition, only when enabled on this port (metrics.ts)
 *
 * They are answered before the app's request function: no access log line, not counted in the
 * metrics, no session. The reason a readiness check fails is logged when the state changes (once,
 * not at every probe); the answer only says `database` or `stopping`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pingStores, type App } from '../app/index.js';
import type { Logger } from './log.js';
import { METRICS_PATH, sendMetrics } from './metrics.js';

export const HEALTH_PATH = '/__/health';
export const READY_PATH = '/__/ready';

/** Longest wait for a store's answer before readiness says no (a probe has a timeout of its own). */
export const READY_TIMEOUT_MS = 2_000;

export interface PlatformOptions {
  /** The exposition, when metrics are served on this port (`--metrics` without a port of their own). */
  metrics?: () => string | Promise<string>;
}

export interface PlatformState {
  /** The app served now (replaced by a reload). */
  app(): App;
  /** The server is stopping: readiness says no, so that balancers stop sending requests. */
  stopping(): boolean;
  logger: Logger;
}

/** Answers the platform paths; returns false for every other request (the app's request function answers). */
export type PlatformRoutes = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createPlatformRoutes(state: PlatformState, options: PlatformOptions = {}): PlatformRoutes {
  let wasReady = true;
  const ready = (req: IncomingMessage, res: ServerResponse) => {
    if (state.stopping()) return sendJson(req, res, 503, { status: 'unavailable', reason: 'stopping' });
    checkStores(state.app()).then(
      () => {
        if (!wasReady) state.logger.info('ready: the database answers again');
        wasReady = true;
        sendJson(req, res, 200, { status: 'ready' });
      },
      (err: unknown) => {
        if (wasReady) state.logger.error(`not ready: ${err instanceof Error ? err.message : String(err)} [LW_SERVE_NOT_READY]`, state.logger.format === 'json' ? { code: 'LW_SERVE_NOT_READY' } : {});
        wasReady = false;
        sendJson(req, res, 503, { status: 'unavailable', reason: 'database' });
      },
    );
  };
  return (req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith('/__/')) return false;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === HEALTH_PATH || path === READY_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') sendJson(req, res, 405, { status: 'method not allowed' });
      else if (path === HEALTH_PATH) sendJson(req, res, 200, { status: 'ok' });
      else ready(req, res);
      return true;
    }
    if (path === METRICS_PATH && options.metrics) {
      sendMetrics(req, res, options.metrics);
      return true;
    }
    return false;
  };
}

function sendJson(req: IncomingMessage, res: ServerResponse, status: number, value: Record<string, string>): void {
  const body = JSON.stringify(value);
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) };
  if (status === 405) headers.Allow = 'GET, HEAD';
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Resolves when every store of the app (and of its nested sites) answers `SELECT 1` in time. */
async function checkStores(app: App): Promise<void> {
  const checks = pingStores(app);
  if (checks.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
  });
  try {
    await Promise.race([Promise.all(checks), late]);
  } finally {
    clearTimeout(timer);
  }
}
